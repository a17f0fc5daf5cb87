package cluster

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/captf-io/kubectl-captf/internal/fakeapi"
	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
)

// A TerraformMachine inherits from the TerraformCluster CAPTF's owner
// lookup finds: its Cluster's spec.infrastructureRef (v1beta2's apiGroup
// or an apiVersion), or, with the Cluster gone, the only TerraformCluster
// labelled with its name. Each lookup is read and decided the same for
// one lock as for all.
func TestInheritanceFindsTheClusterAsCAPTF(t *testing.T) {
	m, mu := machineOf("default", "web", "prod")
	lock := heldLease(m, "root@"+runnerPodName(m))
	for _, c := range []struct {
		name string
		objs []runtime.Object
		// found is the TerraformCluster CAPTF finds, "" for none.
		found    string
		why      string
		reason   []string
		clears   bool
		unsure   bool
		notTF    bool
		warnings []string
		forbid   func(fakeapi.Request) bool
	}{
		{
			name:  "through the Cluster's apiGroup",
			objs:  []runtime.Object{capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")), terraformCluster("default", "prod-tc", ""), terraformCluster("default", "decoy", "prod")},
			found: "prod-tc", why: "Cluster prod's infrastructureRef",
			reason: []string{"no Job is due", "terraformcluster/prod-tc spec.defaults.drift.intervalSeconds"},
		},
		{
			name:  "through the Cluster's apiVersion",
			objs:  []runtime.Object{capiCluster("default", "prod", map[string]any{"apiVersion": object.Group + "/" + object.Version, "kind": "TerraformCluster", "name": "prod-tc"}), terraformCluster("default", "prod-tc", "")},
			found: "prod-tc", why: "Cluster prod's infrastructureRef",
			reason: []string{"no Job is due", "terraformcluster/prod-tc spec.defaults.drift.intervalSeconds"},
		},
		{
			name:  "the Cluster gone: the only one labelled",
			objs:  []runtime.Object{terraformCluster("default", "orphan", "prod"), terraformCluster("default", "other", "staging"), terraformCluster("elsewhere", "far", "prod")},
			found: "orphan", why: "the only TerraformCluster labelled",
			reason: []string{"no Job is due", "terraformcluster/orphan"},
		},
		{
			name:   "the Cluster gone, two labelled: none",
			objs:   []runtime.Object{terraformCluster("default", "a", "prod"), terraformCluster("default", "b", "prod")},
			why:    "2 TerraformClusters are labelled",
			reason: []string{"CAPTF clears it with the object's next Job (a drift Job"}, clears: true,
		},
		{
			name:   "the infrastructureRef names another kind",
			objs:   []runtime.Object{capiCluster("default", "prod", infraRef("infrastructure.example.com", "OtherCluster", "x")), terraformCluster("default", "x", "")},
			why:    "not a TerraformCluster",
			reason: []string{"ClusterNotTerraform"}, notTF: true,
		},
		{
			name:   "the infrastructureRef names no TerraformCluster there is",
			objs:   []runtime.Object{capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "missing"))},
			why:    "terraformcluster/missing, which Cluster prod names, does not exist",
			reason: []string{"CAPTF clears it with the object's next Job"}, clears: true,
		},
		{
			name:     "the Cluster unreadable: unsure, with a warning",
			objs:     []runtime.Object{capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")), terraformCluster("default", "prod-tc", "")},
			forbid:   is("get", "clusters"),
			why:      "Cluster prod could not be read: Forbidden",
			reason:   []string{"if a Job starts", "could not be read"},
			unsure:   true,
			warnings: []string{"what TerraformMachines and TerraformMachinePools inherit from their TerraformCluster is shown as unknown"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, r := newReader(t, append([]runtime.Object{lock, mu.DeepCopy()}, c.objs...)...)
			if c.forbid != nil {
				forbidden(srv, c.forbid)
			}
			snap, rep := readAll(t, r, inspect.Scope{})
			cl, ok := snap.Clusters[m]
			switch {
			case !ok:
				t.Fatalf("no lookup for %s: %+v", m, snap.Clusters)
			case c.found == "" && cl.Object != nil, c.found != "" && (cl.Object == nil || cl.Object.GetName() != c.found):
				t.Errorf("found %+v, want %q", cl.Object, c.found)
			case cl.Read == c.unsure || !strings.Contains(cl.Why, c.why) || (cl.NotTerraform != "") != c.notTF:
				t.Errorf("lookup %+v, want read %v, why %q, not a TerraformCluster %v", cl, !c.unsure, c.why, c.notTF)
			}
			if len(rep.Warnings) != len(c.warnings) {
				t.Errorf("warnings %q, want %d", rep.Warnings, len(c.warnings))
			}
			for n, w := range c.warnings {
				if n < len(rep.Warnings) && !strings.Contains(rep.Warnings[n], w) {
					t.Errorf("warning %q lacks %q", rep.Warnings[n], w)
				}
			}
			res := resultOf(t, rep, "default", lockName(m))
			wantVerdict(t, res, v1alpha1.Stale, c.reason...)
			if res.Decision.CAPTFClears != c.clears {
				t.Errorf("clears %v, want %v: %s", res.Decision.CAPTFClears, c.clears, res.Decision.Reason)
			}
			if one, lone := readOne(t, r, "default", lockName(m)); !reflect.DeepEqual(lone.Decision, res.Decision) || !reflect.DeepEqual(one.Clusters[m], cl) {
				t.Errorf("ReadLock: %s (%s), lookup %+v", lone.Decision.Verdict, lone.Decision.Reason, one.Clusters[m])
			}
		})
	}
	t.Run("no cluster-name label: nothing to look up", func(t *testing.T) {
		bare := mu.DeepCopy()
		bare.SetLabels(nil)
		srv, r := newReader(t, lock, bare, capiCluster("default", "prod", infraRef(object.Group, "TerraformCluster", "prod-tc")))
		snap, _ := readAll(t, r, inspect.Scope{})
		if cl := snap.Clusters[m]; !cl.Read || cl.Object != nil || !strings.Contains(cl.Why, "no "+jobgate.ClusterNameLabel+" label") {
			t.Errorf("lookup %+v", cl)
		}
		if n := srv.Count("get", "clusters") + srv.Count("list", "clusters"); n != 0 {
			t.Errorf("%d reads of Clusters", n)
		}
	})
}

// The owner lookups read by name up to gateGets objects, and past that
// one list of each resource: Clusters, then TerraformClusters by name or,
// for a gone Cluster, by its label.
func TestClusterLookupsByNameThenByList(t *testing.T) {
	build := func(withCluster, gone int) ([]runtime.Object, []object.Ref) {
		var objs []runtime.Object
		var refs []object.Ref
		for i := range withCluster + gone {
			cl := fmt.Sprintf("cl%d", i)
			r, u := machineOf("team-a", fmt.Sprintf("m%d", i), cl)
			objs = append(objs, heldLease(r, "root@"+runnerPodName(r)), u)
			if i < withCluster {
				objs = append(objs, capiCluster("team-a", cl, infraRef(object.Group, "TerraformCluster", "tc-"+cl)), terraformCluster("team-a", "tc-"+cl, ""))
			} else {
				objs = append(objs, terraformCluster("team-a", "tc-"+cl, cl))
			}
			refs = append(refs, r)
		}
		return objs, refs
	}
	labelled := func(q fakeapi.Request) bool {
		return q.Verb == "list" && q.Resource == "terraformclusters" && strings.HasPrefix(q.Query.Get("labelSelector"), jobgate.ClusterNameLabel+"=")
	}
	wholeTCs := func(q fakeapi.Request) bool {
		return q.Verb == "list" && q.Resource == "terraformclusters" && q.Query.Get("labelSelector") == ""
	}
	for _, c := range []struct {
		withCluster, gone int
		// The requests expected of each read.
		clusterGets, clusterLists, tcGets, tcLabelled, tcWholeLists int
	}{
		// By name: as many GETs as Clusters, and TerraformClusters.
		{withCluster: gateGets, clusterGets: gateGets, tcGets: gateGets, tcWholeLists: 1},
		// A gone Cluster's TerraformCluster is found by its label.
		{withCluster: gateGets - 1, gone: 1, clusterGets: gateGets, tcGets: gateGets - 1, tcLabelled: 1, tcWholeLists: 1},
		// Past gateGets: one list each (besides the kind's own list).
		{withCluster: gateGets + 1, clusterLists: 1, tcWholeLists: 2},
		{withCluster: 20, gone: 20, clusterLists: 1, tcWholeLists: 2},
	} {
		t.Run(fmt.Sprintf("%d+%d", c.withCluster, c.gone), func(t *testing.T) {
			objs, refs := build(c.withCluster, c.gone)
			srv, r := newReader(t, objs...)
			snap, rep := readAll(t, r, inspect.Scope{})
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings %q", rep.Warnings)
			}
			for i, ref := range refs {
				if cl := snap.Clusters[ref]; !cl.Read || cl.Object == nil || cl.Object.GetName() != fmt.Sprintf("tc-cl%d", i) {
					t.Errorf("%s: lookup %+v", ref, cl)
				}
			}
			reqs := srv.Requests()
			got := []int{srv.Count("get", "clusters"), srv.Count("list", "clusters"), srv.Count("get", "terraformclusters"), countWhere(reqs, labelled), countWhere(reqs, wholeTCs)}
			want := []int{c.clusterGets, c.clusterLists, c.tcGets, c.tcLabelled, c.tcWholeLists}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Cluster GETs, lists, TerraformCluster GETs, labelled lists, whole lists: %v, want %v:%s", got, want, describe(reqs))
			}
		})
	}
}

// A deleting owner's state Secret is looked for by its metadata only,
// never its data: Present or Absent, by label up to gateGets owners and
// in one list past that.
func TestStateSecretsAreReadAsMetadataOnly(t *testing.T) {
	for _, n := range []int{1, gateGets, gateGets + 1, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var objs []runtime.Object
			var refs []object.Ref
			for i := range n {
				r := object.Ref{Kind: object.TerraformCluster, Namespace: fmt.Sprintf("ns%d", i%2), Name: fmt.Sprintf("c%d", i)}
				objs = append(objs, heldLease(r, "root@"+runnerPodName(r)), deleting(captfObject(r, nil)))
				if i%2 == 0 {
					objs = append(objs, stateSecretOf(r))
				}
				refs = append(refs, r)
			}
			// A Secret of an owner that is not being deleted, and its lock.
			keep := object.Ref{Kind: object.TerraformCluster, Namespace: "ns0", Name: "kept"}
			objs = append(objs, heldLease(keep, "root@"+runnerPodName(keep)), captfObject(keep, nil), stateSecretOf(keep))
			srv := fakeapi.New(t, objs...)
			// What the server answered to each Secrets request, seen on
			// the wire, as the plugin's own request counter wraps it.
			var mu sync.Mutex
			var answers [][]byte
			cfg := srv.Config()
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripper(func(req *http.Request) (*http.Response, error) {
					resp, err := rt.RoundTrip(req)
					if err != nil || !strings.Contains(req.URL.Path, "/secrets") {
						return resp, err
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					resp.Body = io.NopCloser(bytes.NewReader(b))
					mu.Lock()
					answers = append(answers, b)
					mu.Unlock()
					return resp, err
				})
			})
			r, err := ForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			snap, rep := readAll(t, r, inspect.Scope{})
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings %q", rep.Warnings)
			}
			mu.Lock()
			for _, b := range answers {
				data := []byte("SECRET-STATE-DATA")
				if bytes.Contains(b, data) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(data))) || !bytes.Contains(b, []byte("PartialObjectMetadataList")) {
					t.Errorf("a Secrets answer that is not their metadata alone: %q", b)
				}
			}
			if len(answers) == 0 {
				t.Error("no Secrets answer seen")
			}
			mu.Unlock()
			for i, ref := range refs {
				want := jobgate.Absent
				if i%2 == 0 {
					want = jobgate.Present
				}
				if st, ok := snap.States[ref.Namespace+"/"+ref.Suffix()]; !ok || st.Presence != want || st.Why != "" {
					t.Errorf("%s: %+v, want %v", ref, st, want)
				}
			}
			if _, ok := snap.States["ns0/"+keep.Suffix()]; ok || len(snap.States) != n {
				t.Errorf("%d states read for %d deleting owners: %v", len(snap.States), n, snap.States)
			}
			var lists int
			for _, q := range srv.Requests() {
				if q.Resource != "secrets" {
					continue
				}
				lists++
				if q.Verb != "list" {
					t.Errorf("a %s of a Secret: %s", q.Verb, q.Path)
				}
				// The API server answers the first entry it can serve, and
				// every one since 1.15 serves these: the metadata of the
				// Secrets, never their data. client-go's metadata client
				// ends the header with a plain application/json for older
				// servers, and then decodes only the metadata of what comes.
				entries := strings.Split(q.Accept, ",")
				if last := strings.TrimSpace(entries[len(entries)-1]); last == "application/json" && len(entries) > 1 {
					entries = entries[:len(entries)-1]
				}
				for _, entry := range entries {
					if _, params, err := mime.ParseMediaType(strings.TrimSpace(entry)); err != nil || params["as"] != "PartialObjectMetadataList" || params["g"] != "meta.k8s.io" || params["v"] != "v1" {
						t.Errorf("a Secrets list prefers %q, which is not their metadata: %s", entry, q.Accept)
					}
				}
				sel, byName := q.Query.Get("labelSelector"), q.Query.Get("fieldSelector")
				switch {
				case n <= gateGets && !strings.HasPrefix(sel, "tfstate=true,"+inspect.LabelSecretSuffix+"=") &&
					!strings.HasPrefix(sel, jobgate.BackupLabel+"=true,") && !strings.HasPrefix(byName, "metadata.name=captf-"):
					t.Errorf("selector %q %q, want one owner's state or backups by label, or an inputs record by name", sel, byName)
				case n > gateGets && (sel != "" || byName != "" || q.Namespace != ""):
					t.Errorf("selector %q %q in %q, want every Secret in scope", sel, byName, q.Namespace)
				}
			}
			// Four lists an owner (state, backups, two inputs records), or
			// one in scope.
			want := 4 * n
			if n > gateGets {
				want = 1
			}
			if lists != want {
				t.Errorf("%d Secrets requests, want %d", lists, want)
			}
		})
	}
}

// Without the right to list Secrets, whether the state exists is unread:
// said in the state's Why, with no warning (the read-only role does not
// grant it).
func TestStateSecretsForbidden(t *testing.T) {
	srv, r := newReader(t, heldLease(demo, "root@"+runnerPodName(demo)), deleting(captfObject(demo, nil)), stateSecretOf(demo))
	forbidden(srv, is("list", "secrets"))
	snap, rep := readAll(t, r, inspect.Scope{})
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings %q", rep.Warnings)
	}
	st, ok := snap.States["default/"+demo.Suffix()]
	if !ok || st.Presence == jobgate.Present || st.Presence == jobgate.Absent || !strings.Contains(st.Why, "could not be listed: Forbidden") {
		t.Errorf("state %+v", st)
	}
	if srv.Count("list", "secrets") != 1 {
		t.Errorf("%d Secrets lists", srv.Count("list", "secrets"))
	}
	wantVerdict(t, resultOf(t, rep, "default", lockName(demo)), v1alpha1.Stale)
}

// roundTripper is a function as an http.RoundTripper.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// What a deletion's gates read of a deleting owner besides its state: its
// inputs records and state backups (by name and label for a few owners,
// from one list of every Secret past gateGets, alike), and whether its
// namespace is being deleted; each unread, with why, when forbidden.
func TestRecordsAndNamespaceOfDeletingOwners(t *testing.T) {
	secret := func(ns, name string, labels, annotations map[string]string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
			Data: map[string][]byte{"k": []byte("credentials")}}
	}
	for _, n := range []int{1, gateGets + 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var objs []runtime.Object
			var refs []object.Ref
			for i := range n {
				ref := object.Ref{Kind: object.TerraformMachine, Namespace: "gone", Name: fmt.Sprintf("m%d", i)}
				refs = append(refs, ref)
				objs = append(objs, heldLease(ref, "alice@laptop"), deleting(captfObject(ref, nil)))
			}
			m0 := refs[0]
			durable, applied := jobgate.InputsSecrets(m0.Kind.Code, m0.Name)
			objs = append(objs,
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone", DeletionTimestamp: &metav1.Time{Time: time.Now()}, Finalizers: []string{"kubernetes"}}},
				secret("gone", durable, nil, map[string]string{jobgate.InterruptedApplyAnnotation: "captf-m-m0-apply-a3-abcdef"}),
				secret("gone", "backup-1", map[string]string{jobgate.BackupLabel: "true", jobgate.BackupSuffixLabel: m0.Suffix()}, nil),
				// Another owner's records, and a namesake in another namespace.
				secret("gone", applied+"x", nil, nil),
				secret("elsewhere", applied, nil, nil))
			srv, r := newReader(t, objs...)
			snap, _ := readAll(t, r, inspect.Scope{})
			rec := snap.Records["gone/"+m0.Suffix()]
			if want := (jobgate.Records{Read: true, Inputs: true, Interrupted: "captf-m-m0-apply-a3-abcdef", Backups: true, Retained: jobgate.RetainedMarks{DurableExists: true}}); rec != want {
				t.Errorf("m0's records %+v, want %+v", rec, want)
			}
			if rec := snap.Records["gone/"+refs[n-1].Suffix()]; n > 1 && rec != (jobgate.Records{Read: true}) {
				t.Errorf("a recordless owner's records %+v", rec)
			}
			if ns := snap.Namespaces["gone"]; ns.Presence != jobgate.Present {
				t.Errorf("namespace gone: %+v, want being deleted", ns)
			}
			for _, q := range srv.Requests() {
				if q.Resource == "secrets" && q.Verb != "list" {
					t.Errorf("a %s of a Secret", q.Verb)
				}
			}

			forbidden(srv, func(q fakeapi.Request) bool { return q.Resource == "namespaces" || q.Resource == "secrets" })
			snap, rep := readAll(t, r, inspect.Scope{})
			if ns := snap.Namespaces["gone"]; ns.Presence != jobgate.Unread || !strings.Contains(ns.Why, "Forbidden") || !strings.Contains(ns.Why, "namespaces") {
				t.Errorf("namespace forbidden: %+v", ns)
			}
			if rec := snap.Records["gone/"+m0.Suffix()]; rec.Read || !strings.Contains(rec.Why, "Forbidden") {
				t.Errorf("records forbidden: %+v", rec)
			}
			if len(rep.Warnings) != 0 {
				t.Errorf("warnings %q: what the read-only role does not grant is no warning", rep.Warnings)
			}
		})
	}
}
