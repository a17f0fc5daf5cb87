package e2e

// The rows of issue 19 and of its review (/work/notes/review-19.md):
// where CAPTF's own Job-start path, followed past the lock check into the
// code that creates (or does not create) the Job, decides whether a Stale
// lock clears, and where CAPTF deletes the lock Lease itself. Each row
// cites the CAPTF functions and the commits of the files followed (the
// newest stored versions the readers of CAPTF's source could locate;
// docs/how-it-decides.md lists them).
//
// Each row's objects are what CAPTF would see (testbed.World): an owner
// that references the object back, its credentials, a state Secret with
// real state, its inputs records, and the conditions CAPTF writes; a row
// leaves out only what its case is about. So a row that expects
// captfClears is one where CAPTF really starts the Job.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The CAPTF files of issue 19, at the commits followed.
const (
	cfReconcile   = "internal/controllers/shared/reconcile.go@99fd973d5e3cc29b95dce3c83e8a571f019a7597"
	cfBookkeeping = "internal/controllers/shared/bookkeeping.go@81a0ff422f986130946f62ca8e093aeff3e5fc2c"
	cfStale       = "internal/locks/stale.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfNameGo      = "internal/jobs/name.go@81a0ff422f986130946f62ca8e093aeff3e5fc2c"
	cfList        = "internal/jobs/list.go@c17d41803a622de4dd8491031b1a6066070bbc50"
	cfCache       = "internal/manager/cache.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfEffective   = "internal/controllers/shared/effective.go@3655ed0dc8390b73bfc3669fc3bed2459d11dcaa"
	cfDecide      = "internal/controllers/shared/decide.go@c9597b2aebc31919344aa6c2d5cdd15427127855"
	cfDeps        = "internal/controllers/shared/dependencies.go@0454c6c56e647751e8251185a18712f0d3530c78"
	cfOwner       = "internal/controllers/shared/owner.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfPreamble    = "internal/controllers/shared/preamble.go@81a0ff422f986130946f62ca8e093aeff3e5fc2c"
	cfRetain      = "internal/controllers/shared/retain.go@665f88bbb7e5f92cc5a32fd15406517769c0e98a"
	cfCleanup     = "internal/controllers/shared/cleanup.go@665f88bbb7e5f92cc5a32fd15406517769c0e98a"
	cfStateClean  = "internal/state/cleanup.go@cb3b6168039b7530a050c767aab667d794babcab"
	cfDeletion    = "internal/controllers/shared/deletion.go@ade7dc79d93b624f3a23cffb2e55f6487a315ab7"
	cfSeed        = "internal/controllers/shared/seed.go@8654f495cf20f5c9d2563693140cd51529529278"
	cfMachine     = "internal/controllers/terraformmachine/adapter.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfPool        = "internal/controllers/terraformmachinepool/adapter.go@8654f495cf20f5c9d2563693140cd51529529278"
	cfOptions     = "cmd/manager/app/options/options.go@1df390d07e70a8c27f620b6d1233dfda42835e02"
	cfRestore     = "internal/controllers/shared/restore.go@4b3ba278faff2ad1a0d02cd1a5329583a79a9d1c"
	cfReader      = "internal/state/reader.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfLabels      = "internal/state/labels.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfDurable     = "internal/inputs/durable.go@bfe694cf5a21042ffe2b04fd201cdb6e3cf88245"
	cfClusterDel  = "internal/controllers/terraformcluster/delete.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfOwnership   = "internal/ownership/ownership.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
)

func cf19(parts ...string) string { return "captf (issue 19): " + strings.Join(parts, ", ") }

// cond19 is one status condition as CAPTF writes it.
func cond19(typ, status, reason string) map[string]any {
	return testbed.Condition(typ, status, reason, "set by the test", time.Now())
}

func status19(conds ...map[string]any) map[string]any {
	list := make([]any, len(conds))
	for n, c := range conds {
		list[n] = c
	}
	return map[string]any{"conditions": list}
}

// seed19 creates the objects of a row, failing the test on an error.
func seed19(t *testing.T, r object.Ref, s testbed.Seeded) {
	t.Helper()
	if err := admin.Seed(context.Background(), r, s); err != nil {
		t.Fatalf("seeding %s: %v", r, err)
	}
}

// world19 is a world (testbed.World) of the row's object: in the
// row's Cluster "prod" when onProd.
func world19(w testbed.World, onProd bool) *testbed.World {
	if onProd {
		w.Cluster = "prod"
	}
	return &w
}

// prod19 makes the row's CAPI Cluster "prod" and its TerraformCluster
// "prod", with the given spec.defaults (none when nil); annotations go on
// the TerraformCluster.
func prod19(t *testing.T, ns string, defaults map[string]any, annotations map[string]string) {
	t.Helper()
	spec := map[string]any{}
	if defaults != nil {
		spec["defaults"] = defaults
	}
	seed19(t, object.Ref{Kind: object.TerraformCluster, Namespace: ns, Name: "prod"}, testbed.Seeded{Spec: spec, Annotations: annotations, World: &testbed.World{Cluster: "prod"}})
}

// lock19 is a row's lock: the object's Lease held with cfLockID by who.
func lock19(r *object.Ref, who string) ([]*coordinationv1.Lease, string) {
	name := object.LockLeaseName("default", r.Suffix())
	return []*coordinationv1.Lease{cfLease(r.Namespace, name, cfPtr(cfLockID), cfCheckInfo(who), nil)}, name
}

// stale19 is a row of a lock held by r's own runner pod op-a1, gone.
func stale19(name, ns string, k object.Kind, cite string) (cfRow, *object.Ref) {
	r := cfRef(k, ns, "web")
	pod := cfJobName(k.Code, r.Name, "apply", 1, "d72d2a") + "-x7k2p"
	leases, lease := lock19(r, "root@"+pod)
	return cfRow{
		name: name, cite: cite, ns: ns, leases: leases, lease: lease, absent: []string{pod},
		want: v1alpha1.Stale, owner: r, lockID: cfLockID, host: pod, explain: true,
	}, r
}

// foreign19 is a row of a lock held by a workstation.
func foreign19(name, ns string, k object.Kind, cite string) (cfRow, *object.Ref) {
	r := cfRef(k, ns, "web")
	leases, lease := lock19(r, "steven@laptop")
	return cfRow{
		name: name, cite: cite, ns: ns, leases: leases, lease: lease,
		want: v1alpha1.Foreign, owner: r, lockID: cfLockID, host: "laptop", explain: true,
	}, r
}

// issue19Rows are the rows of issue 19, cases 1 to 7, and of its review.
func issue19Rows() []cfRow {
	var rows []cfRow
	tc, tm, tmp := object.TerraformCluster, object.TerraformMachine, object.TerraformMachinePool
	seedOf := func(r *object.Ref, s testbed.Seeded) func(t *testing.T, ns string) {
		return func(t *testing.T, _ string) { seed19(t, *r, s) }
	}
	in := func(w testbed.World) *testbed.World { return &w }

	// Case 1: a holder name client-go refuses. CAPTF's OwnsPod accepts
	// any 5-character tail; its lock check GETs the pod, client-go
	// refuses the name before any request (an error, not NotFound), and
	// every reconcile fails there.
	for _, c := range []struct{ ns, tail, refuses string }{{"cf19-1-slash", "ab/cd", "may not contain '/'"}, {"cf19-1-percent", "ab%cd", "may not contain '%'"}} {
		r := cfRef(tc, c.ns, "demo")
		host := "captf-c-demo-apply-a1-d72d2a-" + c.tail
		leases, lease := lock19(r, "root@"+host)
		rows = append(rows, cfRow{
			name: "issue19/1 refused holder name " + c.tail,
			cite: cf19(cfNameGo+" OwnsPod", cfStale+" Check", cfBookkeeping+" Bookkeep, checkLock", cfReconcile+" run, paused"),
			note: "OwnsPod accepts the host; the pod GET fails in client-go (rest.Request.Name, IsValidPathSegmentName) before any request, so Check errs, every reconcile fails and no Job starts",
			ns:   c.ns, objects: []object.Ref{*r}, world: true, leases: leases, lease: lease,
			want: v1alpha1.Stale, owner: r, lockID: cfLockID, host: host, explain: true,
			says:      []string{"client-go refuses its name (" + c.refuses + ")", "fails on every reconcile", "no Job starts", "no StateLocked is set", "no Retain or cleanup runs", "the lock stays until someone clears it (kubectl captf unlock may)"},
			action:    []string{"client-go refuses that name (" + c.refuses + ") before sending any request", "The lock stays until someone clears it; kubectl captf unlock may."},
			notAction: []string{"force-unlock -force"},
			check: func(t *testing.T, kc string, _ v1alpha1.Lock) {
				if res := captf(t, kc, "unlock", r.String()); res.code != 0 || !strings.Contains(res.out, "Would:") {
					t.Errorf("unlock %s (dry run): exit %d\n%s%s", r, res.code, res.out, res.err)
				}
			},
		})
	}
	{
		r := cfRef(tc, "cf19-1-upper", "demo")
		host := "captf-c-demo-apply-a1-d72d2a-AB_CD"
		leases, lease := lock19(r, "root@"+host)
		rows = append(rows, cfRow{
			name: "issue19/1 holder name not a pod name, sent",
			cite: cf19(cfNameGo+" OwnsPod", cfStale+" Check", cfReconcile+" run, startOp", cfDecide+" decide (InputsChanged)"),
			note: "client-go sends the GET of a name with upper case or '_' (a valid path segment); the API server answers NotFound: an ordinary Stale lock, and in this world CAPTF's next Job (an apply of the changed inputs) force-unlocks it",
			ns:   r.Namespace, objects: []object.Ref{*r}, leases: leases, lease: lease,
			want: v1alpha1.Stale, clears: true, owner: r, lockID: cfLockID, host: host, explain: true,
			says: []string{"its name is not a valid pod name", "CAPTF clears it with the object's next Job"},
		})
	}
	{
		row, r := stale19("issue19/1 refused holder name, Retain deletion", "cf19-1-retain", tc, cf19(cfStale+" Check", cfBookkeeping+" checkLock", cfReconcile+" run (cleanup and Retain come after Bookkeep)"))
		host := "captf-c-web-apply-a1-d72d2a-ab/cd"
		row.leases, row.lease = lock19(r, "root@"+host)
		row.host, row.absent = host, nil
		row.setup = seedOf(r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}, World: in(testbed.World{})})
		row.says = []string{"no Retain or cleanup runs"}
		rows = append(rows, row)
	}

	// Case 2: drift and remediation resolved as CAPTF's Resolve does,
	// with the TerraformCluster found as LookupCluster finds it. Each
	// machine is provisioned, with its state and inputs records: it
	// builds no inputs, and its refresh and drift Jobs render the record.
	{
		row, r := stale19("issue19/2a drift 0 inherited, no remediation", "cf19-2a", tm,
			cf19(cfEffective+" Resolve, MergeMachineDriftPolicy, clusterInherited", cfDecide+" decide, schedule", cfReconcile+" decideInput", cfDeps+" LookupCluster", cfMachine+" Mutable, RefreshAfterApply"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}}, nil)
			seed19(t, *r, testbed.Seeded{World: world19(testbed.World{}, true)})
		}
		row.note = "a provisioned TerraformMachine builds no inputs; with drift 0 and no health interval, decide returns UpToDate and finish does not requeue: no Job"
		row.says = []string{"no Job is due", "terraformcluster/prod spec.defaults.drift.intervalSeconds", "remediation.annotateMachine is not set"}
		row.action = []string{"Nothing: ", "no Job is due", "The lock stays until that changes or it is cleared by hand."}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/2b own drift 0, annotateMachine", "cf19-2b", tm, cf19(cfEffective+" Resolve, MergeRemediation", cfDecide+" schedule (HealthCheckDue)", cfReconcile+" checkFiles, runRecord"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, nil, nil)
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}, "remediation": map[string]any{"annotateMachine": true}}, World: world19(testbed.World{}, true)})
		}
		row.clears = true
		row.says = []string{"CAPTF clears it with the object's next Job (a health-check refresh Job (every 300 s: spec.remediation.annotateMachine is true"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/2c drift 0 and annotateMachine inherited", "cf19-2c", tm, cf19(cfEffective+" Resolve, MergeRemediation", cfDecide+" schedule", cfReconcile+" checkFiles, runRecord"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}, "remediation": map[string]any{"annotateMachine": true, "healthCheckIntervalSeconds": int64(120)}}, nil)
			seed19(t, *r, testbed.Seeded{World: world19(testbed.World{}, true)})
		}
		row.clears = true
		row.says = []string{"a health-check refresh Job (every 120 s: terraformcluster/prod spec.defaults.remediation.annotateMachine is true"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/2d the Cluster gone: the orphaned TerraformCluster", "cf19-2d", tm, cf19(cfDeps+" LookupCluster, lookupOrphanedCluster", cfEffective+" Resolve"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, object.Ref{Kind: tc, Namespace: ns, Name: "orphan"}, testbed.Seeded{
				Spec: map[string]any{"defaults": map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}}}, Labels: map[string]string{testbed.ClusterNameLabel: "gone"}})
			// The Machine is on Cluster "gone", which does not exist.
			seed19(t, *r, testbed.Seeded{World: in(testbed.World{Cluster: "gone", NoCluster: true})})
		}
		row.says = []string{"no Job is due", "terraformcluster/orphan spec.defaults.drift.intervalSeconds"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/2e a pool's drift is never off", "cf19-2e", tmp, cf19(cfEffective+" resolvePool", cfPool+" Owner, BuildInputs, Spec, RefreshAfterApply", cfDecide+" decide (InputsChanged), schedule (MembershipRefreshDue)"))
		row.setup = func(t *testing.T, ns string) {
			// A pool renders its cluster's exports; an externally managed
			// TerraformCluster's are {} (shared ReadClusterOutputs).
			prod19(t, ns, map[string]any{"drift": map[string]any{"intervalSeconds": int64(0)}}, map[string]string{testbed.ExternallyManagedAnnotation: "test-bed"})
			seed19(t, *r, testbed.Seeded{World: world19(testbed.World{}, true)})
		}
		row.clears = true
		row.says = []string{"a membership refresh Job (every 60 s"}
		rows = append(rows, row)
	}

	// Case 3: a deleting object takes the destroy path: no inputs gate,
	// no plan gating, no drift, no Job policy check; the destroy renders
	// the inputs record, and its Job needs a namespace that can take it.
	{
		row, r := stale19("issue19/3a destroy past left-over apply gates", "cf19-3a", tc,
			cf19(cfReconcile+" run (inputs only when not deleting), startOp (ValidateEffectiveJobPolicy skipped for destroy), destroyFiles, runRecord", cfDecide+" decide (Deleting: Destroy before plan gating and the schedule)"))
		row.setup = seedOf(r, testbed.Seeded{
			Spec: map[string]any{"deletionPolicy": "Destroy", "drift": map[string]any{"intervalSeconds": int64(0)}, "jobs": map[string]any{"lockTimeoutSeconds": int64(3600)}},
			Status: status19(cond19("ApplyJobSucceeded", "False", "JobPolicyInvalid"), cond19("DependenciesReady", "False", "VariablesSourceNotFound"),
				cond19("DriftJobSucceeded", "Unknown", "DurableInputsMissing")),
			Delete: []string{}, World: in(testbed.World{}),
		})
		row.clears = true
		row.says = []string{"CAPTF clears it with"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/3b machine, inherited Destroy, left-over dependency gate", "cf19-3b", tm, cf19(cfEffective+" Resolve (DeletionPolicy)", cfReconcile+" run, destroyFiles", cfSeed+" buildInputs"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, nil, nil)
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DependenciesReady", "Unknown", "WaitingForBootstrapData")), Delete: []string{}, World: world19(testbed.World{}, true)})
		}
		row.clears = true
		row.says = []string{"CAPTF clears it with"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/3c machine, policy unresolved", "cf19-3c", tm, cf19(cfEffective+" Resolve (\"\" when the cluster is unknown)", cfDeletion+" policyUnresolved", cfDeps+" LookupCluster"))
		row.setup = seedOf(r, testbed.Seeded{Delete: []string{}, World: in(testbed.World{Cluster: "nowhere", NoCluster: true})})
		row.says = []string{"deletionPolicy is unresolved", "DeletionPolicyUnresolved"}
		row.action = []string{"The lock stays until that changes or it is cleared by hand."}
		rows = append(rows, row)
	}

	// Case 4: CAPTF deletes the lock Lease itself, without a Job, whoever
	// holds it.
	{
		row, r := stale19("issue19/4a Retain deletes the Lease", "cf19-4a", tc, cf19(cfRetain+" Retain", cfStateClean+" DeleteLock", cfReconcile+" run, cleanup", cfDecide+" decide (ActionRetain)"))
		row.setup = seedOf(r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}, World: in(testbed.World{})})
		row.deletes, row.certain = "Retain", true
		row.says = []string{"no Job of CAPTF's force-unlocks it: the object is being deleted under deletionPolicy Retain", "CAPTF deletes this lock Lease itself, without a Job", "its own unlock then fails (the Lease is not found)"}
		row.action = []string{"No Job: ", "CAPTF deletes this lock Lease itself, without a Job and whoever holds it", "This assumes that CAPTF's manager reconciles the object"}
		row.notAction = []string{"The lock stays"}
		rows = append(rows, row)
	}
	{
		row, r := foreign19("issue19/4b a foreign lock on a Retain deletion", "cf19-4b", tc, cf19(cfRetain+" Retain", cfStateClean+" DeleteLock (no look at the holder)"))
		row.setup = seedOf(r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}, World: in(testbed.World{})})
		row.deletes, row.certain = "Retain", true
		row.says = []string{"CAPTF deletes this lock Lease itself"}
		row.action = []string{"CAPTF deletes this lock Lease itself, without a Job and whoever holds it", "another client can create a new lock and write the state at the same time"}
		rows = append(rows, row)
	}
	{
		r := cfRef(tc, "cf19-4c", "web")
		name := object.LockLeaseName("default", r.Suffix())
		rows = append(rows, cfRow{
			name: "issue19/4c externally managed deletion", cite: cf19(cfPreamble+" Preamble, releaseExternallyManaged", cfRetain+" Retain"),
			ns: r.Namespace, leases: []*coordinationv1.Lease{cfLease(r.Namespace, name, cfPtr(cfLockID), "", nil)}, lease: name,
			want: v1alpha1.Unknown, owner: r, lockID: cfLockID, explain: true,
			setup:   seedOf(r, testbed.Seeded{Annotations: map[string]string{testbed.ExternallyManagedAnnotation: "other"}, Delete: []string{}, World: in(testbed.World{})}),
			deletes: "ExternallyManagedRelease", certain: true,
			says:   []string{"CAPTF deletes this lock Lease itself"},
			action: []string{"CAPTF deletes this lock Lease itself"},
		})
	}
	{
		row, r := stale19("issue19/4d cleanup after a successful destroy", "cf19-4d", tc, cf19(cfReconcile+" run (DestroySucceeded → cleanup)", cfCleanup+" Cleanup", cfBookkeeping+" applyDestroy, DestroySucceeded", cfList+" List"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{}, World: in(testbed.World{})})
			uid, err := admin.UID(context.Background(), *r)
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.Job(context.Background(), *r, "captf-c-web-destroy-a1-aaaaaa", "destroy", uid, testbed.JobSucceeded); err != nil {
				t.Fatal(err)
			}
		}
		row.deletes, row.certain = "CleanupAfterDestroy", true
		row.says = []string{"its newest destroy Job succeeded", "CAPTF deletes this lock Lease itself"}
		rows = append(rows, row)
	}
	{
		// Never applied: no state, no inputs records, no backups, not
		// provisioned: CAPTF drops the finalizer and its cleanup deletes
		// the Lease.
		row, r := stale19("issue19/4e deletion without state", "cf19-4e", tc, cf19(cfDecide+" decide (ActionDropFinalizer)", cfCleanup+" Cleanup", cfDeletion+" appliedBefore", cfReconcile+" noState"))
		row.setup = seedOf(r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{}, World: in(testbed.World{NoState: true, NoRecords: true, Unprovisioned: true})})
		row.deletes, row.certain = "CleanupWithoutState", true
		row.says = []string{"it has no state Secret", "this lock Lease itself"}
		rows = append(rows, row)
	}

	// Case 5: the active Job is the newest unfinished Job the object
	// controls (by UID); a Job of an earlier object of its name is not.
	{
		row, r := foreign19("issue19/5a a Job of an earlier object is not active", "cf19-5a", tc, cf19(cfList+" clientRunner.List (IsControlledBy), Active", cfCache+" jobSelector", cfBookkeeping+" Bookkeep"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{World: in(testbed.World{})})
			if err := admin.Job(context.Background(), *r, "captf-c-web-apply-a1-bbbbbb", "apply", types.UID("00000000-0000-0000-0000-0000000ea121"), testbed.JobRunning); err != nil {
				t.Fatal(err)
			}
		}
		row.active, row.disagrees = "", 1
		row.check = func(t *testing.T, kc string, _ v1alpha1.Lock) {
			events, _ := watchVia(t, kc)
			select {
			case e := <-events:
				if e.Object.Name != row.lease || e.Object.ActiveJob != "" {
					t.Errorf("locks -w: %s activeJob %q, want none", e.Object.Name, e.Object.ActiveJob)
				}
			case <-time.After(30 * time.Second):
				t.Error("locks -w printed nothing")
			}
		}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/5b a Job the object controls is active", "cf19-5b", tc, cf19(cfList+" clientRunner.List, Active", cfBookkeeping+" Bookkeep (no lock check while a Job runs)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{World: in(testbed.World{})})
			uid, err := admin.UID(context.Background(), *r)
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.Job(context.Background(), *r, "captf-c-web-drift-a2-cccccc", "drift", uid, testbed.JobRunning); err != nil {
				t.Fatal(err)
			}
		}
		row.clears, row.active = true, "captf-c-web-drift-a2-cccccc"
		row.action = []string{"Job captf-c-web-drift-a2-cccccc is active, so the controller checks the lock only after it finishes."}
		row.check = func(t *testing.T, kc string, _ v1alpha1.Lock) {
			events, _ := watchVia(t, kc)
			select {
			case e := <-events:
				if e.Object.ActiveJob != "captf-c-web-drift-a2-cccccc" {
					t.Errorf("locks -w: activeJob %q", e.Object.ActiveJob)
				}
			case <-time.After(30 * time.Second):
				t.Error("locks -w printed nothing")
			}
		}
		rows = append(rows, row)
	}

	// Case 6: the Job policy is validated as CAPTF merges it, whenever a
	// non-destroy, non-restore Job is due, condition or not.
	{
		row, r := stale19("issue19/6a invalid policy, no condition yet", "cf19-6a", tc, cf19(cfEffective+" ValidateEffectiveJobPolicy", cfReconcile+" startOp", "internal/jobs/spec.go@07c8c1e0ba04add1241dc3ba4845a7facfb6a4bb defaults"))
		row.setup = seedOf(r, testbed.Seeded{Spec: map[string]any{"jobs": map[string]any{"lockTimeoutSeconds": int64(3600)}}, World: in(testbed.World{})})
		row.says = []string{"the effective Job policy is invalid: lockTimeoutSeconds 3600 (spec.jobs.lockTimeoutSeconds) is not below activeDeadlineSeconds 3600 (the built-in default)"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/6b invalid by inheritance", "cf19-6b", tm, cf19(cfEffective+" MergeJobPolicy, clusterInherited, ValidateEffectiveJobPolicy"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, map[string]any{"jobs": map[string]any{"activeDeadlineSeconds": int64(200)}}, nil)
			seed19(t, *r, testbed.Seeded{World: world19(testbed.World{}, true)})
		}
		row.says = []string{"activeDeadlineSeconds 200 (terraformcluster/prod spec.defaults.jobs.activeDeadlineSeconds)"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/6c left-over JobPolicyInvalid, valid policy", "cf19-6c", tc, cf19(cfReconcile+" startOp (validates again each time)", cfBookkeeping+" applyDestroy (the condition is kept without a retained apply Job)"))
		row.setup = seedOf(r, testbed.Seeded{Status: status19(cond19("ApplyJobSucceeded", "False", "JobPolicyInvalid")), World: in(testbed.World{})})
		row.clears = true
		rows = append(rows, row)
	}

	// Case 7.
	{
		row, r := stale19("issue19/7a retained state with a restore asked", "cf19-7a", tc, cf19(cfRetain+" checkRetained, heldOnRetained", cfReconcile+" run (heldOnRetained before restoreTarget)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"}, Status: status19(cond19("StateReadable", "False", "RetainedStateFound")), World: in(testbed.World{})})
			// The Secrets an earlier web kept under deletionPolicy Retain.
			if err := admin.RetainedBy(context.Background(), *r, "00000000-0000-0000-0000-0000000ea121"); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"not even a restore"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue19/7b left-over DependenciesReady on a provisioned machine", "cf19-7b", tm, cf19(cfReconcile+" run (inputs only for a mutable or unprovisioned object), checkFiles", cfMachine+" Mutable", cfSeed+" build"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, nil, nil)
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DependenciesReady", "False", "WaitingForClusterExports")), World: world19(testbed.World{}, true)})
		}
		row.clears = true
		rows = append(rows, row)
	}
	{
		// The Machine is there; the Cluster its cluster-name label names
		// is not: the inputs gate of an unprovisioned machine.
		row, r := stale19("issue19/7c WaitingForOwner with the owner present: the inputs gate", "cf19-7c", tm, cf19(cfPreamble+" Preamble", cfOwner+" ResolveOwner", "internal/controllers/shared/gates.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 CheckGates"))
		row.setup = seedOf(r, testbed.Seeded{Status: status19(cond19("DependenciesReady", "Unknown", "WaitingForOwner")), World: in(testbed.World{Cluster: "missing", NoCluster: true, Unprovisioned: true, NoState: true, NoRecords: true})})
		// Issue 26: without state, the Job that comes once the gate
		// clears fails its init on the lock.
		row.says = []string{"no Job clears it: no state Secret of suffix", "exists: its state was never written", "whether that Job starts at all: a dependency gate is set (DependenciesReady Unknown/WaitingForOwner)"}
		rows = append(rows, row)
	}
	{
		row, r := foreign19("issue19/7d the inputs gate is not quiet", "cf19-7d", tm, cf19(cfReconcile+" run (readState before buildInputs; StateLocked set)", "internal/controllers/shared/gates.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 CheckGates"))
		row.setup = seedOf(r, testbed.Seeded{Status: status19(cond19("DependenciesReady", "Unknown", "WaitingForOwner"), cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{Cluster: "missing", NoCluster: true, Unprovisioned: true})})
		row.disagrees = 1
		rows = append(rows, row)
	}
	{
		row, r := foreign19("issue19/7e a blocked deletion is quiet", "cf19-7e", tc, cf19(cfReconcile+" run (DeletionBlocked before readState)", cfClusterDel+" DeletionBlocked"))
		// A StateLocked condition naming another lock: CAPTF rewrites it
		// only at a reconcile that reads the state, which a blocked
		// deletion does not reach. The machine of its cluster blocks it.
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DeletionBlocked", "True", "DependentsExist"), testbed.Condition("StateReadable", "False", "StateLocked", "The state lock 00000000-1111-2222-3333-444444444444 is held by alice@laptop", time.Now())), World: in(testbed.World{})})
			seed19(t, object.Ref{Kind: tm, Namespace: ns, Name: "worker"}, testbed.Seeded{World: in(testbed.World{Cluster: "cl-" + r.Suffix()})})
			if err := admin.DeleteHeldWith(context.Background(), *r, testbed.Finalizer(tc)); err != nil {
				t.Fatal(err)
			}
		}
		row.disagrees = 2
		rows = append(rows, row)
	}
	{
		// A machine owned only by a Cluster: CAPTF's owner lookup wants a
		// Machine (util.GetOwnerMachine), so its preamble stops.
		row, r := stale19("issue19/7f an owner of the wrong kind", "cf19-7f", tm, cf19(cfMachine+" Owner", cfOwner+" ResolveOwner", cfPreamble+" Preamble (!HasOwnerRef)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{World: in(testbed.World{NoOwner: true})})
			if err := admin.PatchObject(context.Background(), *r, map[string]any{"metadata": map[string]any{"ownerReferences": []any{
				map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "c", "uid": "00000000-0000-0000-0000-00000000c1a5"},
			}}}); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"no Machine owner reference", "WaitingForOwnerMachine"}
		rows = append(rows, row)
	}
	for n := range rows {
		if rows[n].note == "" {
			rows[n].note = fmt.Sprintf("issue 19 row %d", n+1)
		}
	}
	return append(rows, review19Rows()...)
}

// review19Rows are the rows of the review of issue 19's implementation
// (findings 1, 2, 3, 5, 7, 8, 10).
func review19Rows() []cfRow {
	var rows []cfRow
	tc, tm := object.TerraformCluster, object.TerraformMachine
	in := func(w testbed.World) *testbed.World { return &w }

	// Finding 1: a namespace being deleted refuses every create, so the
	// destroy Job is never created (namespaceTerminatingHold); Retain
	// only deletes, and still deletes the Lease. Both objects and both
	// locks are made before the namespace is deleted (it then stays
	// Terminating: the test-bed runs no namespace controller).
	{
		ns := "cf19-r1"
		destroy, retain := cfRef(tc, ns, "web"), cfRef(tc, ns, "kept")
		pod := cfJobName("c", "web", "apply", 1, "d72d2a") + "-x7k2p"
		leases, lease := lock19(destroy, "root@"+pod)
		kept, keptLease := lock19(retain, "root@"+cfJobName("c", "kept", "apply", 1, "d72d2a")+"-x7k2p")
		rows = append(rows, cfRow{
			name: "review19/1 destroy in a terminating namespace", ns: ns, lease: lease, absent: []string{pod},
			cite: cf19(cfReconcile + " startOp, namespaceTerminating, namespaceTerminatingHold, deletionCredentials"),
			note: "takeLeases and StartJob are refused by NamespaceLifecycle: the Deleting condition says so and no Job is ever created",
			want: v1alpha1.Stale, owner: destroy, lockID: cfLockID, host: pod, explain: true,
			setup: func(t *testing.T, ns string) {
				ctx := context.Background()
				seed19(t, *destroy, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{}, World: in(testbed.World{})})
				seed19(t, *retain, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Delete: []string{}, World: in(testbed.World{})})
				for _, l := range append(leases, kept...) {
					if _, err := admin.Kube.CoordinationV1().Leases(ns).Create(ctx, l, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
				}
				if err := admin.DeleteNamespace(ctx, ns); err != nil {
					t.Fatal(err)
				}
			},
			says:   []string{"namespace " + ns + " is being deleted"},
			action: []string{"namespace " + ns + " is being deleted"},
		}, cfRow{
			name: "review19/1 Retain in a terminating namespace", ns: ns, lease: keptLease,
			cite: cf19(cfRetain+" Retain", cfStateClean+" DeleteLock", cfDecide+" decide (ActionRetain before the destroy)"),
			want: v1alpha1.Stale, owner: retain, lockID: cfLockID, host: cfJobName("c", "kept", "apply", 1, "d72d2a") + "-x7k2p", explain: true,
			deletes: "Retain", certain: true,
			says: []string{"CAPTF deletes this lock Lease itself"},
		})
	}

	// Finding 2: the preamble's release of a deleted object without an
	// owner reference (ownerlessRelease): with no state, no Job and no
	// sign of an apply it drops the finalizer there, leaving the Lease;
	// an object that applied before goes on to the full reconcile, where
	// Retain deletes the Lease.
	{
		row, r := stale19("review19/2 ownerless, applied before, Retain", "cf19-r2a", tc, cf19(cfPreamble+" Preamble, ownerlessRelease, hasStateOrJob", cfDeletion+" everApplied, appliedBefore", cfRetain+" Retain"))
		row.setup = func(t *testing.T, ns string) {
			// Provisioned, its state gone: CAPTF's last pass wrote StateLost.
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Status: status19(cond19("StateReadable", "False", "StateLost")), Delete: []string{}, World: in(testbed.World{NoOwner: true, NoState: true})})
		}
		row.deletes, row.certain = "Retain", true
		row.says = []string{"CAPTF deletes this lock Lease itself"}
		rows = append(rows, row)
	}
	{
		row, r := stale19("review19/2 ownerless, never applied: released", "cf19-r2b", tm, cf19(cfPreamble+" Preamble, ownerlessRelease", cfDeletion+" everApplied"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Delete: []string{}, World: in(testbed.World{NoOwner: true, NoState: true, NoRecords: true, Unprovisioned: true})})
		}
		row.says = []string{"CAPTF drops its finalizer in its preamble, starting no Job and leaving the Lease"}
		rows = append(rows, row)
	}

	// Finding 3: a machine whose Machine does not reference it back:
	// CAPTF's ResolveOwner returns before LookupCluster, so it inherits
	// no deletionPolicy (unresolved); the plugin reads no Machine and
	// says unsure.
	{
		row, r := stale19("review19/3 deleting machine, OwnerMismatch", "cf19-r3", tm, cf19(cfOwner+" ResolveOwner (OwnerMismatch before LookupCluster)", cfOwnership+" MachineOwnerMismatch", cfEffective+" Resolve", cfDeletion+" policyUnresolved"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, map[string]any{"deletionPolicy": "Retain"}, nil)
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DependenciesReady", "False", "OwnerMismatch")), Delete: []string{}, World: world19(testbed.World{ForeignOwner: true}, true)})
		}
		row.deletes, row.certain = "Retain", false
		row.says = []string{"if that owner still does not reference it back, CAPTF looks up no TerraformCluster"}
		rows = append(rows, row)
	}

	// Finding 5: a TerraformMachine's destroy renders its inputs record;
	// without one CAPTF cannot render it (DestroyFailed) and starts no
	// Job.
	{
		row, r := stale19("review19/5 machine destroy without inputs records", "cf19-r5", tm, cf19(cfReconcile+" destroyFiles, runRecord, noFiles", cfDurable+" Read"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, nil, nil)
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{}, World: world19(testbed.World{NoRecords: true}, true)})
		}
		row.says = []string{"inputs record"}
		rows = append(rows, row)
	}

	// Finding 7: a deleted, provisioned object without state is held, and
	// the restore asked for starts (restoreTarget with held true); the
	// plugin does not read whether that serial's backup is complete.
	{
		row, r := stale19("review19/7 no state, provisioned, restore asked", "cf19-r7", tc, cf19(cfReconcile+" noState, run (restoreTarget(held && !retain))", cfRestore+" restoreTarget, startRestore", cfDecide+" decide (Restore && StateHeld)"))
		row.setup = func(t *testing.T, ns string) {
			// Provisioned, its state gone: CAPTF's last pass wrote StateLost.
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"}, Status: status19(cond19("StateReadable", "False", "StateLost")), Delete: []string{}, World: in(testbed.World{NoState: true})})
			uid, err := admin.UID(context.Background(), *r)
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.StateBackup(context.Background(), *r, "cl-"+r.Suffix(), 3, uid); err != nil {
				t.Fatal(err)
			}
		}
		row.note = "CAPTF starts the restore Job; without a state Secret its init fails on the lock (issue 26), so it does not clear it"
		row.says = []string{"no Job clears it: no state Secret of suffix", "the restore Job runs init first", "whether that Job starts at all:", "only the restore Job asked for (captf.io/restore-state=3) starts, if that backup exists"}
		row.replay = &cfReplay{step: "init", output: []string{"already locked by another"}}
		rows = append(rows, row)
	}

	// Finding 8: a left-over DeletionPolicyUnresolved decides nothing
	// once the object sets its own policy.
	{
		row, r := stale19("review19/8 own Retain past a left-over DeletionPolicyUnresolved", "cf19-r8", tm, cf19(cfEffective+" Resolve (an own policy is never \"\")", cfReconcile+" setup (Deleting reset each pass)", cfRetain+" Retain"))
		row.setup = func(t *testing.T, ns string) {
			prod19(t, ns, nil, nil)
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Status: status19(cond19("Deleting", "True", "DeletionPolicyUnresolved")), Delete: []string{}, World: world19(testbed.World{}, true)})
		}
		row.deletes, row.certain = "Retain", true
		row.says = []string{"deletionPolicy Retain (spec.deletionPolicy)"}
		rows = append(rows, row)
	}

	// Finding 10: any Secret with the backend's three labels is state to
	// CAPTF; a chunk without its base is an inconsistent state, which
	// holds the deletion (no Job, no cleanup).
	{
		row, r := stale19("review19/10 a state chunk alone holds the deletion", "cf19-r10", tc, cf19(cfReader+" Read, orderChunks", cfLabels+" Selector", cfReconcile+" readState, run (held)", cfDeletion+" deletionHeld"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Status: status19(cond19("StateReadable", "False", "StateInconsistent")), Delete: []string{}, World: in(testbed.World{NoState: true})})
			if err := admin.StateChunk(context.Background(), *r, "cl-"+r.Suffix(), 1); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"CAPTF holds the deletion on the state (StateReadable False/StateInconsistent)"}
		rows = append(rows, row)
	}
	for n := range rows {
		if rows[n].note == "" {
			rows[n].note = fmt.Sprintf("review of issue 19, row %d", n+1)
		}
	}
	return rows
}
