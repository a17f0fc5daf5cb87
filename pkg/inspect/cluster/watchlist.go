package cluster

import "k8s.io/client-go/features"

// listFirst turns client-go's WatchListClient off and leaves every other
// gate as client-go (and its KUBE_FEATURE_* variables) sets it.
//
// From client-go v0.35 the gate is on by default, and every informer of
// `locks -w` then starts with a streaming watch (sendInitialEvents)
// instead of a list. The watch follows its cluster only if a list that
// fails before the first sync ends it with that error, through the
// informer's watch error handler. The streaming start does not do that:
// client-go v0.37.2's Reflector.watchList (tools/cache/reflector.go)
// retries a connection error (an unreachable server, a refused
// connection) forever, with back-off, and never calls the handler, so
// `locks -w` against a server that is down printed nothing and never
// ended. A list first is also what every other command of the plugin
// makes.
type listFirst struct{ features.Gates }

func (g listFirst) Enabled(f features.Feature) bool {
	return f != features.WatchListClient && g.Gates.Enabled(f)
}

func init() {
	features.ReplaceFeatureGates(listFirst{features.FeatureGates()})
}
