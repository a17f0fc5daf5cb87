package cluster

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// maxReadRequests bounds the requests of one Read, whatever the number of
// locks, from read.go's plan:
//
//	1                 the Leases list
//	+ 1               the runner Jobs list
//	+ len(Kinds)      one list of each CAPTF kind (owners kept from it)
//	+ 2               the labelled pod list, and the whole pod list that
//	                  replaces it past holderGets holders (the first may
//	                  or may not reach the server before it is cancelled)
//	+ holderGets      holder pods read by name (none once the whole list
//	                  is read)
//	+ gateGets        CAPI Clusters by name, else one list
//	+ gateGets        TerraformClusters by name or label, else one list
//	+ 4*gateGets      a deleting owner's Secrets' metadata: its state and
//	                  its backups by label, its two inputs records by
//	                  name; else one list
//	+ gateGets        a deleting owner's namespace, by name, else one list
var maxReadRequests = 1 + 1 + len(object.Kinds) + 2 + holderGets + gateGets + gateGets + 4*gateGets + gateGets

// maxReadRequestsPastThresholds bounds them once there are more holders
// than holderGets and more owners than gateGets: every read by name has
// turned into one list.
// (Namespaces are read by name up to gateGets of them whatever the
// number of owners: the test's cluster has three.)
var maxReadRequestsPastThresholds = 1 + 1 + len(object.Kinds) + 2 + 1 + 1 + 1 + gateGets

// scaled is a cluster of n locks in three namespaces: a quarter Live
// (labelled pod), a quarter Stale (pod gone), a quarter Live through an
// unlabelled pod, a quarter deleting TerraformMachines of their own CAPI
// Cluster, whose TerraformCluster exists, with their pod gone, half of
// them with their state Secret.
func scaled(n int) (objs []runtime.Object, live, stale int) {
	for i := range n {
		ns := fmt.Sprintf("ns%d", i%3)
		switch i % 4 {
		case 0, 1, 3:
			r := object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: fmt.Sprintf("c%d", i)}
			objs = append(objs, heldLease(r, "root@"+runnerPodName(r)), captfObject(r, nil))
			switch i % 4 {
			case 0:
				objs = append(objs, podOf(ns, runnerPodName(r), corev1.PodRunning, true))
				live++
			case 1:
				stale++
			case 3:
				objs = append(objs, podOf(ns, runnerPodName(r), corev1.PodRunning, false))
				live++
			}
		case 2:
			cl := fmt.Sprintf("cl%d", i)
			r, u := machineOf(ns, fmt.Sprintf("m%d", i), cl)
			objs = append(objs, heldLease(r, "root@"+runnerPodName(r)), deleting(u),
				capiCluster(ns, cl, infraRef(object.Group, "TerraformCluster", "tc"+cl)), terraformCluster(ns, "tc"+cl, ""))
			if i%8 == 2 {
				objs = append(objs, stateSecretOf(r))
			}
			stale++
		}
	}
	return objs, live, stale
}

// The requests of Read do not grow with the locks: below one bound for 3
// locks as for 240, and past the thresholds every read by name is a list.
func TestReadRequestsDoNotGrowWithLocks(t *testing.T) {
	for _, n := range []int{3, 4 * gateGets, holderGets, 2 * holderGets, 60, 240} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			objs, live, stale := scaled(n)
			srv, r := newReader(t, objs...)
			snap, rep := readAll(t, r, inspect.Scope{})
			if len(rep.Results) != n || len(rep.Warnings) != 0 {
				t.Fatalf("%d results for %d locks, warnings %q", len(rep.Results), n, rep.Warnings)
			}
			verdicts := map[v1alpha1.Verdict]int{}
			for _, res := range rep.Results {
				verdicts[res.Decision.Verdict]++
				o := res.Facts.Owner.Ref
				if o.Kind != object.TerraformMachine {
					continue
				}
				// What the gates read around a deleting machine, by name or
				// by list alike.
				cl := snap.Clusters[o]
				if res.Facts.Gate == nil || !cl.Read || cl.Object == nil || cl.Object.GetName() != "tccl"+strings.TrimPrefix(o.Name, "m") {
					t.Errorf("%s: gate %v, TerraformCluster found %+v", o, res.Facts.Gate != nil, cl)
				}
				i, _ := strconv.Atoi(strings.TrimPrefix(o.Name, "m"))
				want := jobgate.Absent
				if i%8 == 2 {
					want = jobgate.Present
				}
				if st, ok := snap.States[o.Namespace+"/"+o.Suffix()]; !ok || st.Presence != want || st.Why != "" {
					t.Errorf("%s: state Secret %+v, want %v", o, st, want)
				}
			}
			if verdicts[v1alpha1.Live] != live || verdicts[v1alpha1.Stale] != stale {
				t.Errorf("verdicts %v, want %d Live and %d Stale", verdicts, live, stale)
			}
			reqs := srv.Requests()
			t.Logf("%d locks: %d requests (bound %d)", n, len(reqs), maxReadRequests)
			if len(reqs) > maxReadRequests {
				t.Errorf("%d requests, want at most %d:%s", len(reqs), maxReadRequests, describe(reqs))
			}
			for _, c := range []struct {
				verb, resource string
				max            int
			}{
				{"list", "leases", 1}, {"list", "jobs", 1},
				{"list", "terraformmachines", 1}, {"list", "terraformmachinepools", 1},
				{"list", "pods", 2}, {"get", "pods", holderGets},
				{"get", "clusters", gateGets}, {"list", "clusters", 1},
				{"get", "terraformclusters", gateGets},
				// The kind's own list, and one of the gates' reads.
				{"list", "terraformclusters", 2},
				{"list", "secrets", 4 * gateGets}, {"get", "secrets", 0},
				{"get", "namespaces", gateGets}, {"list", "namespaces", 1},
				{"get", "leases", 0},
			} {
				if got := srv.Count(c.verb, c.resource); got > c.max {
					t.Errorf("%d %s of %s, want at most %d", got, c.verb, c.resource, c.max)
				}
			}
			// Every lock names a runner pod; a quarter are deleting machines.
			if holders, machines := n, (n+1)/4; holders > holderGets && machines > gateGets {
				if len(reqs) > maxReadRequestsPastThresholds || srv.Count("get", "pods") != 0 {
					t.Errorf("%d requests (%d pod GETs), want at most %d and no GET past the thresholds:%s", len(reqs), srv.Count("get", "pods"), maxReadRequestsPastThresholds, describe(reqs))
				}
				whole := countWhere(reqs, func(q fakeapi.Request) bool {
					return q.Verb == "list" && q.Resource == "pods" && q.Query.Get("labelSelector") == ""
				})
				if whole != 1 {
					t.Errorf("%d unfiltered pod lists, want 1", whole)
				}
			}
		})
	}
}
