package inspect

import (
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// Snapshot is what one read of a cluster gave: every input of the verdicts
// of the locks in it, and nothing decided. The reading layer
// (pkg/inspect/cluster) fills it, from one read for a scope or for a
// single lock, or from its informers for a watch; Decide turns it into
// verdicts without reading anything, so every command decides the same
// way from the same kind of input.
type Snapshot struct {
	// Leases are the lock Leases in scope, taken apart.
	Leases []Lease
	// Sources are the Leases as read, by "<namespace>/<name>", where the
	// reader kept them: a single lock's, which unlock writes back at the
	// resourceVersion read.
	Sources map[string]*coordinationv1.Lease
	// Kinds are the lists of the CAPTF kinds, by Kind name.
	Kinds map[string]KindList
	// Objects are the objects read in full, for their gates: the owners of
	// the held locks (of every lock, for a single one).
	Objects map[object.Ref]*unstructured.Unstructured
	// Pods are the pods read, by "<namespace>/<name>": at least the pod
	// of every held lock whose host may be a runner pod (Exists false when
	// it is proven gone, which only a read by name or of every pod proves),
	// and CAPTF's labelled runner pods.
	Pods map[string]*Pod
	// Jobs are CAPTF's runner Jobs in scope, without their spec; JobsErr
	// says why they could not be listed.
	Jobs    []*batchv1.Job
	JobsErr error
	// Clusters is what CAPTF's owner lookup finds for each
	// TerraformMachine and TerraformMachinePool of Objects with an owner of
	// its kind: the TerraformCluster it inherits from, or why none.
	Clusters map[object.Ref]jobgate.Cluster
	// States says whether an object of Objects has state (any
	// Secret CAPTF's state reader lists for it: jobgate.StateOf), by
	// "<namespace>/<suffix>".
	States map[string]StateRead
	// Records are a deleting object's inputs records and state backups
	// (jobgate.RecordsOf), by "<namespace>/<suffix>".
	Records map[string]jobgate.Records
	// Namespaces says whether the namespace of a deleting object of
	// Objects is being deleted, by name.
	Namespaces map[string]StateRead
	// Warnings are one-line notes about reads that failed without making
	// the verdicts wrong.
	Warnings []string
}

// KindList is what listing one CAPTF kind gave.
type KindList struct {
	Kind object.Kind
	// Served is false when the API server does not serve the kind (its CRD
	// is not installed).
	Served bool
	// Err is set when the list failed otherwise (RBAC, most often).
	Err error
	// Objects are the objects listed.
	Objects map[object.Ref]ObjectMeta
}

// ObjectMeta is what a list keeps of every CAPTF object.
type ObjectMeta struct {
	UID types.UID
	// Deleting is true when the object has a deletionTimestamp.
	Deleting bool
	// ClusterLabel is the object's cluster.x-k8s.io/cluster-name label,
	// and OwnerCluster the name of its first owner reference to a Cluster
	// API Cluster (ClusterOwner): what ClusterOf names its Cluster by.
	ClusterLabel, OwnerCluster string
}

// NewKindList is an empty, served list of k.
func NewKindList(k object.Kind) KindList {
	return KindList{Kind: k, Served: true, Objects: map[object.Ref]ObjectMeta{}}
}

// StateRead is whether something the gates read exists: an object's
// state, a namespace's deletion.
type StateRead struct {
	Presence jobgate.Presence
	Why      string
	// Secrets is the metadata of an object's state Secrets (those of
	// jobgate.StateSelector), where they were listed: their labels say
	// whether the runtime's init finds them, their annotations whether
	// CAPTF's StateLost is a missing Secret.
	Secrets []metav1.ObjectMeta
}

// Key is a lock's, a pod's or an object's "<namespace>/<name>".
func Key(namespace, name string) string { return namespace + "/" + name }

// OwnerKey is the "<namespace>/<suffix>" of a lock of workspace default,
// the one CAPTF reads, and whether it is held; ok is false for a lock of
// any other workspace, whose owner's gates decide nothing.
func OwnerKey(l Lease) (key string, held, ok bool) {
	if l.Workspace != object.DefaultWorkspace {
		return "", false, false
	}
	return l.Namespace + "/" + l.Suffix, l.Held, true
}

// KeepInFull says whether a read keeps in full the object that owns a
// lock of workspace default, for its gates: when the lock is held, whose
// verdict they decide, and when the object is being deleted, since CAPTF
// may then delete the Lease itself, held or not. Every read of a lock,
// of a scope or of one, keeps the same objects, so that each decides the
// same; an object kept for no reason would only cost memory.
func KeepInFull(held, deleting bool) bool { return held || deleting }

// HolderPod is the pod a lock's host may be one of its owner's own runner
// pods, before the owner is known: the pod that must be read, by name or
// in a read of every pod, since only that proves it gone.
func HolderPod(l Lease) (string, bool) {
	if !names(l) || l.ID == "" {
		return "", false
	}
	if _, err := runner.ParsePodName(l.Host); err != nil {
		return "", false
	}
	return l.Host, true
}

// names is true when a lock names a host, so its pod may matter.
func names(l Lease) bool { return l.Held && l.Info != nil && l.HostErr == nil }
