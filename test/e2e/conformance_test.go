package e2e

// The conformance suite of issue 10: every case of CAPTF v0.1.x's own tests
// of the stale-lock rules, replayed against the real test-bed as one Lease,
// object and pod set per case, with CAPTF's expected outcome mapped onto the
// plugin's five verdicts:
//
//	CAPTF not held (no Lease, holderIdentity nil)           -> Unlocked
//	CAPTF not held because holderIdentity is ""              -> Unknown (deliberate:
//	                                                            Terraform still sees a lock)
//	CAPTF foreign: lock info missing or unparseable, Who
//	               without "@" or with nothing after it      -> Unknown
//	CAPTF foreign: the host is not one of the object's pods  -> Foreign
//	CAPTF stale: own pod NotFound, Succeeded or Failed       -> Stale
//	own pod alive: Pending, Running, Unknown, terminating    -> Live
//
// The sources, cited row by row: internal/jobs/jobs_test.go (TestOwnsPod,
// TestNames), internal/locks/stale_test.go (TestCheck,
// TestCheckIgnoresRunLeases, TestFixtureLease, TestFixtureLeaseHeld),
// internal/controllers/shared/reconcile_test.go (TestBookkeepForceUnlock),
// and the lock fixtures of internal/state/testdata/fixtures.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// cfLockID is the lock ID of CAPTF's stale_test.go and reconcile_test.go.
const cfLockID = "9f1c0c5e-0000-4000-8000-000000000001"

// cfPodName is the holder pod of CAPTF's stale_test.go: web's apply runner.
const cfPodName = "captf-m-web-apply-a1-abc123-x7k2p"

// cfCheckInfo is stale_test.go's info(who), byte for byte.
func cfCheckInfo(who string) string {
	return `{"ID":"` + cfLockID + `","Operation":"OperationTypeApply","Who":"` + who + `","Version":"1.16.4","Created":"2026-09-25T20:00:00Z"}`
}

// cfBookkeepInfo is reconcile_test.go's lock info for TestBookkeepForceUnlock:
// another field order, and no Created.
func cfBookkeepInfo(who string) string {
	return `{"ID":"` + cfLockID + `","Who":"` + who + `","Operation":"OperationTypeApply","Version":"1.16.4"}`
}

// cfJobName is CAPTF's jobs.Name, written here from its algorithm rather
// than taken from pkg/runner, so that the pod names of the TestNames rows
// do not come from the code under test.
func cfJobName(kindShort, name, op string, attempt int32, hash6 string) string {
	n := fmt.Sprintf("captf-%s-%s-%s-a%d-%s", kindShort, name, op, attempt, hash6)
	if len(n) <= 57 {
		return n
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("captf-%s-%s-%s-a%d-%s", kindShort, hex.EncodeToString(sum[:])[:16], op, attempt, hash6)
}

// cfPod is a pod to have in the case's namespace. Like CAPTF's test pods it
// carries no labels: the controller GETs the holder by name.
type cfPod struct {
	name string
	// phase "" is CAPTF's pod with no status; a real API server creates
	// pods Pending, so the phase is then cleared through the status.
	phase       corev1.PodPhase
	terminating bool
}

// cfRow is one case.
type cfRow struct {
	name string // the subtest's name
	cite string // "captf: <file> <Test>/<case>"
	note string // why the verdict maps as it does, where it is not one-to-one
	ns   string

	objects []object.Ref
	pods    []cfPod
	absent  []string // pods that must not exist (deleted if an earlier row made them)
	leases  []*coordinationv1.Lease
	// lease is the lock Lease the row is about; "" when the case has no
	// lock Lease, and then owner is explained and must be Unlocked.
	lease string

	want   v1alpha1.Verdict
	owner  *object.Ref // the object the lock is attributed to; nil for none
	clears bool        // captfClears
	lockID string      // lock.id, for a held lock
	host   string      // holder.host, when Who names one
	// explain also runs explain -o json on the Lease and requires it to agree.
	explain bool
	// check adds assertions of the case's own.
	check func(t *testing.T, kubeconfig string, l v1alpha1.Lock)

	// The rows of issue 19 (conformance19_test.go) also state:
	// setup makes the row's objects in full (spec, labels, annotations,
	// status, deletion), CAPI Clusters, Jobs and Secrets, before the
	// Leases are written.
	setup func(t *testing.T, ns string)
	// active is the activeJob of the lock, in locks and explain ("" none).
	active string
	// deletes is captfDeletesLease.path ("" for null), certain its certain.
	deletes string
	certain bool
	// says are in the reason; action are in explain's controllerAction,
	// notAction are not.
	says, action, notAction []string
	// disagrees, when not 0, runs explain and requires a disagreement: 1
	// one CAPTF acts on at its next reconcile, 2 one that waits (the
	// reconcile is quiet).
	disagrees int
	// replay, for a row whose lock CAPTF's Job does not clear because of
	// what the runtime does, is the runner step that shows it: the runner
	// replay (replay_test.go) requires the lock still held after the
	// steps and that output from that step. Rows whose lock CAPTF clears
	// are replayed without it.
	replay *cfReplay
	// world makes objects with what CAPTF reads around them
	// (testbed.World): every row that expects captfClears does, so that
	// CAPTF would really start the Job there.
	world bool
	// realID, when set, is the lock ID a real runtime took in setup; it
	// stands for lockID.
	realID *string
}

func cfRef(k object.Kind, ns, name string) *object.Ref {
	return &object.Ref{Kind: k, Namespace: ns, Name: name}
}

// cfLease builds a lock Lease as CAPTF's lease(holder, info) helper does:
// holder nil leaves spec.holderIdentity out (CAPTF's helper uses "" for
// that; here a pointer to "" writes an empty holderIdentity), info "" leaves
// the lock-info annotation out.
func cfLease(ns, name string, holder *string, info string, labels map[string]string) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
	l.Spec.HolderIdentity = holder
	if info != "" {
		l.Annotations = map[string]string{"app.terraform.io/lock-info": info}
	}
	return l
}

func cfPtr(s string) *string { return &s }

// cfHost is the holder host the plugin should report: the text after the
// last "@", when there is one.
func cfHost(who string) string {
	if i := strings.LastIndex(who, "@"); i >= 0 {
		return who[i+1:]
	}
	return ""
}

// The Lease documents of CAPTF's internal/state/testdata/fixtures, verbatim
// (commit d6986f4646de003dbde2b12ec279505307a1b667): what Terraform 1.16.4
// and OpenTofu 1.12.6 wrote, uid, resourceVersion and timestamps removed.
const (
	cfFixtureTerraformLocked = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  annotations:
    app.terraform.io/lock-info: '{"ID":"3442fe8d-2b45-f5cb-8b89-56f6a3666326","Operation":"OperationTypeApply","Info":"","Who":"steven@captf-fixtures","Version":"1.16.4","Created":"2026-09-26T15:53:38.315668626Z","Path":""}'
  labels:
    app.kubernetes.io/managed-by: terraform
    captf.infrastructure.cluster.x-k8s.io/owner-kind: TerraformMachine
    captf.infrastructure.cluster.x-k8s.io/owner-name: terraform-locked
    captf.io/managed: 'true'
    cluster.x-k8s.io/cluster-name: fixture
    clusterctl.cluster.x-k8s.io/move: ''
    tfstate: 'true'
    tfstateSecretSuffix: 48db616173c97a97-m
    tfstateWorkspace: default
  name: lock-tfstate-default-48db616173c97a97-m
  namespace: fixtures
spec:
  holderIdentity: 3442fe8d-2b45-f5cb-8b89-56f6a3666326
`
	cfFixtureOpenTofuLocked = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  annotations:
    app.terraform.io/lock-info: '{"ID":"3dc084a4-6b1f-1f82-35f5-beda810e2029","Operation":"OperationTypeApply","Info":"","Who":"steven@captf-fixtures","Version":"1.12.6","Created":"2026-09-26T15:54:08.500828566Z","Path":""}'
  labels:
    app.kubernetes.io/managed-by: terraform
    captf.infrastructure.cluster.x-k8s.io/owner-kind: TerraformMachine
    captf.infrastructure.cluster.x-k8s.io/owner-name: opentofu-locked
    captf.io/managed: 'true'
    cluster.x-k8s.io/cluster-name: fixture
    clusterctl.cluster.x-k8s.io/move: ''
    tfstate: 'true'
    tfstateSecretSuffix: 8319cb71b6c50144-m
    tfstateWorkspace: default
  name: lock-tfstate-default-8319cb71b6c50144-m
  namespace: fixtures
spec:
  holderIdentity: 3dc084a4-6b1f-1f82-35f5-beda810e2029
`
	cfFixtureTerraformLockedStopped = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  labels:
    app.kubernetes.io/managed-by: terraform
    captf.infrastructure.cluster.x-k8s.io/owner-kind: TerraformMachine
    captf.infrastructure.cluster.x-k8s.io/owner-name: terraform-locked
    captf.io/managed: 'true'
    cluster.x-k8s.io/cluster-name: fixture
    clusterctl.cluster.x-k8s.io/move: ''
    tfstate: 'true'
    tfstateSecretSuffix: 48db616173c97a97-m
    tfstateWorkspace: default
  name: lock-tfstate-default-48db616173c97a97-m
  namespace: fixtures
spec: {}
`
	cfFixtureOpenTofuLockedStopped = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  labels:
    app.kubernetes.io/managed-by: terraform
    captf.infrastructure.cluster.x-k8s.io/owner-kind: TerraformMachine
    captf.infrastructure.cluster.x-k8s.io/owner-name: opentofu-locked
    captf.io/managed: 'true'
    cluster.x-k8s.io/cluster-name: fixture
    clusterctl.cluster.x-k8s.io/move: ''
    tfstate: 'true'
    tfstateSecretSuffix: 8319cb71b6c50144-m
    tfstateWorkspace: default
  name: lock-tfstate-default-8319cb71b6c50144-m
  namespace: fixtures
spec: {}
`
	cfFixtureTerraformSingle = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  labels:
    app.kubernetes.io/managed-by: terraform
    captf.infrastructure.cluster.x-k8s.io/owner-kind: TerraformMachine
    captf.infrastructure.cluster.x-k8s.io/owner-name: terraform-single
    captf.io/managed: 'true'
    cluster.x-k8s.io/cluster-name: fixture
    clusterctl.cluster.x-k8s.io/move: ''
    tfstate: 'true'
    tfstateSecretSuffix: 6d36142bf7b22a47-m
    tfstateWorkspace: default
  name: lock-tfstate-default-6d36142bf7b22a47-m
  namespace: fixtures
spec: {}
`
)

func cfFixture(doc string) *coordinationv1.Lease {
	var l coordinationv1.Lease
	if err := yaml.UnmarshalStrict([]byte(doc), &l); err != nil {
		panic(err) // constant input
	}
	return &l
}

// conformanceRows is the suite, in order. Rows sharing a namespace run in
// this order; the fixture rows replay one Lease's life (held, then
// released) in the fixtures' own namespace.
func conformanceRows() []cfRow {
	var rows []cfRow
	m := object.TerraformMachine

	// internal/locks/stale_test.go TestCheck: object TerraformMachine web,
	// predicate ownsWeb = OwnsPod("m", "web", ·), Lease with no labels.
	// CAPTF's suffix 0123456789abcdef-m is a placeholder; here the Lease is
	// named with web's real suffix, so that web is its owner.
	for i, c := range []struct {
		name   string
		holder *string
		who    string // lock info cfCheckInfo(who), when info is ""
		info   string
		pod    *cfPod
		noLock bool
		want   v1alpha1.Verdict
		note   string
	}{
		{name: "no Lease", noLock: true, want: v1alpha1.Unlocked, note: "not held: no Lease, so no lock is listed and explain says Unlocked"},
		{name: "released (no holder)", want: v1alpha1.Unlocked, note: "not held: no holderIdentity"},
		{name: "held, pod alive", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, pod: &cfPod{name: cfPodName}, want: v1alpha1.Live,
			note: "own pod with no phase: alive"},
		{name: "held, pod gone", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, want: v1alpha1.Stale, note: "own pod NotFound"},
		{name: "held, pod Failed", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, pod: &cfPod{name: cfPodName, phase: corev1.PodFailed}, want: v1alpha1.Stale},
		{name: "held, pod Succeeded", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, pod: &cfPod{name: cfPodName, phase: corev1.PodSucceeded}, want: v1alpha1.Stale},
		{name: "held, pod Running", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, pod: &cfPod{name: cfPodName, phase: corev1.PodRunning}, want: v1alpha1.Live},
		{name: "held, pod terminating", holder: cfPtr(cfLockID), who: "runner@" + cfPodName, pod: &cfPod{name: cfPodName, phase: corev1.PodRunning, terminating: true}, want: v1alpha1.Live,
			note: "a Running pod with a deletionTimestamp (kept by a finalizer) is alive"},
		{name: "empty user", holder: cfPtr(cfLockID), who: "@" + cfPodName, want: v1alpha1.Stale, note: `Who "@<pod>": the host is still after the "@"`},
		{name: "no lock info", holder: cfPtr(cfLockID), want: v1alpha1.Unknown, note: `CAPTF: held, Holder "" (foreign); lock info missing -> Unknown`},
		{name: "garbage lock info", holder: cfPtr(cfLockID), info: "{", want: v1alpha1.Unknown, note: `CAPTF: held, Holder "" (foreign); lock info unparseable -> Unknown`},
		{name: "no hostname", holder: cfPtr(cfLockID), who: "runner@", want: v1alpha1.Unknown, note: `CAPTF: held, Holder "" (foreign); nothing after "@" -> Unknown`},
		{name: "workstation holder", holder: cfPtr(cfLockID), who: "steven@laptop", want: v1alpha1.Foreign, note: "CAPTF: foreign; the host is not web's pod"},
		{name: "another object's pod", holder: cfPtr(cfLockID), who: "runner@captf-m-api-apply-a1-abc123-x7k2p", want: v1alpha1.Foreign, note: "CAPTF: foreign; api's pod is not web's"},
		{name: "look-alike pod", holder: cfPtr(cfLockID), who: "runner@captf-m-web-apply-a1-abc123", want: v1alpha1.Foreign, note: "CAPTF: foreign; no 5-character pod suffix"},
	} {
		if c.info == "" && c.who != "" {
			c.info = cfCheckInfo(c.who)
		}
		ns := fmt.Sprintf("cf-check-%02d", i+1)
		web := cfRef(m, ns, "web")
		r := cfRow{
			name: "TestCheck/" + c.name, cite: fmt.Sprintf("captf: internal/locks/stale_test.go TestCheck/%q", c.name), note: c.note, ns: ns,
			objects: []object.Ref{*web}, want: c.want, owner: web, clears: c.want == v1alpha1.Stale,
			explain: i%3 == 0 || c.want == v1alpha1.Unknown,
		}
		if c.pod != nil {
			r.pods = []cfPod{*c.pod}
		}
		if !c.noLock {
			r.lease = object.LockLeaseName("default", web.Suffix())
			r.leases = []*coordinationv1.Lease{cfLease(ns, r.lease, c.holder, c.info, nil)}
		}
		if c.holder != nil {
			r.lockID = *c.holder
		}
		r.host = cfHost(c.who)
		rows = append(rows, r)
	}

	// Check, step 2, with no test case of its own: holderIdentity nil or ""
	// is not held "whatever the annotations say".
	{
		ns := "cf-check-holder-empty"
		web := cfRef(m, ns, "web")
		name := object.LockLeaseName("default", web.Suffix())
		rows = append(rows, cfRow{
			name: "Check/holderIdentity empty", cite: `captf: internal/locks/stale.go Check, step 2: holderIdentity "" is not held (no test case)`,
			note: `deliberate difference: CAPTF sees no lock, but Terraform sees one held by an empty ID and every Job fails; the plugin says Unknown`,
			ns:   ns, objects: []object.Ref{*web},
			leases: []*coordinationv1.Lease{cfLease(ns, name, cfPtr(""), cfCheckInfo("runner@"+cfPodName), nil)},
			lease:  name, want: v1alpha1.Unknown, owner: web, lockID: "", explain: true,
		})
		ns = "cf-check-holder-nil-info"
		web = cfRef(m, ns, "web")
		name = object.LockLeaseName("default", web.Suffix())
		rows = append(rows, cfRow{
			name: "Check/no holder, lock info left", cite: "captf: internal/locks/stale.go Check, step 2: holderIdentity nil is not held whatever the annotations say (no test case)",
			ns: ns, objects: []object.Ref{*web},
			leases: []*coordinationv1.Lease{cfLease(ns, name, nil, cfCheckInfo("runner@"+cfPodName), nil)},
			lease:  name, want: v1alpha1.Unlocked, owner: web,
		})
	}

	// TestCheckIgnoresRunLeases: CAPTF's run lease captf-run-<suffix>,
	// held, with web's backend labels, is never a lock.
	{
		ns := "cf-check-run-lease"
		web := cfRef(m, ns, "web")
		run := cfLease(ns, "captf-run-"+web.Suffix(), cfPtr("captf-m-web-apply-a1-abc123"), "", map[string]string{
			"captf.infrastructure.cluster.x-k8s.io/owner-kind": "TerraformMachine",
			"captf.infrastructure.cluster.x-k8s.io/owner-name": "web",
			"cluster.x-k8s.io/cluster-name":                    "c1",
			"captf.io/managed":                                 "true",
			"clusterctl.cluster.x-k8s.io/move":                 "",
		})
		rows = append(rows, cfRow{
			name: "TestCheckIgnoresRunLeases", cite: "captf: internal/locks/stale_test.go TestCheckIgnoresRunLeases",
			note: "not held: the run lease is not listed as a lock, and web has no lock",
			ns:   ns, objects: []object.Ref{*web}, leases: []*coordinationv1.Lease{run},
			want: v1alpha1.Unlocked, owner: web,
		})
	}

	// TestFixtureLease and TestFixtureLeaseHeld on CAPTF's fixtures, in
	// their own namespace with the objects their suffixes belong to
	// (sha256("fixtures/TerraformMachine/<name>")[:16]). The real
	// predicate, OwnsPod("m", "<owner>", "captf-fixtures"), is false, so
	// each held fixture is Foreign, whether the pod captf-fixtures exists
	// or not.
	fx := "fixtures"
	fixtureObjects := []object.Ref{*cfRef(m, fx, "terraform-single"), *cfRef(m, fx, "terraform-locked"), *cfRef(m, fx, "opentofu-locked")}
	rows = append(rows, cfRow{
		name: "TestFixtureLease/terraform-single", cite: `captf: internal/locks/stale_test.go TestFixtureLease "terraform-single"`,
		note: "not held: spec {}", ns: fx, objects: fixtureObjects,
		leases: []*coordinationv1.Lease{cfFixture(cfFixtureTerraformSingle)}, lease: "lock-tfstate-default-6d36142bf7b22a47-m",
		want: v1alpha1.Unlocked, owner: cfRef(m, fx, "terraform-single"), explain: true,
	})
	for _, alive := range []bool{false, true} {
		for _, f := range []struct{ name, doc, id, version string }{
			{"terraform-locked", cfFixtureTerraformLocked, "3442fe8d-2b45-f5cb-8b89-56f6a3666326", "1.16.4"},
			{"opentofu-locked", cfFixtureOpenTofuLocked, "3dc084a4-6b1f-1f82-35f5-beda810e2029", "1.12.6"},
		} {
			r := cfRow{
				name:    fmt.Sprintf("TestFixtureLeaseHeld/%s/alive=%v", f.name, alive),
				cite:    fmt.Sprintf(`captf: internal/locks/stale_test.go TestFixtureLeaseHeld {%q, %q}, alive=%v, Check(…, ownsWeb); fixture internal/state/testdata/fixtures/%s.yaml`, f.name, f.version, alive, f.name),
				note:    "CAPTF: held, Holder \"\" under the real predicate (captf-fixtures is no runner pod of " + f.name + "): Foreign, never stale, whether the pod exists or not",
				ns:      fx,
				objects: fixtureObjects,
				leases:  []*coordinationv1.Lease{cfFixture(f.doc)},
				lease:   cfFixture(f.doc).Name,
				want:    v1alpha1.Foreign, owner: cfRef(m, fx, f.name), lockID: f.id, host: "captf-fixtures", explain: !alive,
				check: func(t *testing.T, _ string, l v1alpha1.Lock) {
					if k := l.Lock; k == nil || k.InfoID != f.id || k.Who != "steven@captf-fixtures" || k.Operation != "OperationTypeApply" || k.Version != f.version {
						t.Errorf("lock %+v, want ID %s by steven@captf-fixtures, OperationTypeApply, version %s", l.Lock, f.id, f.version)
					}
				},
			}
			if alive {
				r.pods = []cfPod{{name: "captf-fixtures"}}
			} else {
				r.absent = []string{"captf-fixtures"}
			}
			rows = append(rows, r)
		}
	}
	for _, f := range []struct{ name, doc, owner string }{
		{"terraform-locked-stopped", cfFixtureTerraformLockedStopped, "terraform-locked"},
		{"opentofu-locked-stopped", cfFixtureOpenTofuLockedStopped, "opentofu-locked"},
	} {
		rows = append(rows, cfRow{
			name: "TestFixtureLease/" + f.name, cite: fmt.Sprintf("captf: internal/locks/stale_test.go TestFixtureLease %q", f.name),
			note: "not held: the same Lease as " + f.owner + " after the runtime released it (spec {})",
			ns:   fx, objects: fixtureObjects, absent: []string{"captf-fixtures"},
			leases: []*coordinationv1.Lease{cfFixture(f.doc)}, lease: cfFixture(f.doc).Name,
			want: v1alpha1.Unlocked, owner: cfRef(m, fx, f.owner),
		})
	}

	// internal/controllers/shared/reconcile_test.go TestBookkeepForceUnlock:
	// TerraformMachine m1, dead pod captf-m-m1-apply-a1-abc123-x7k2p.
	deadPod := "captf-m-m1-apply-a1-abc123-x7k2p"
	for i, c := range []struct {
		name string
		who  string
		pod  *cfPod
		want v1alpha1.Verdict
	}{
		{"dead pod of this object's own Job: force-unlock", "runner@" + deadPod, nil, v1alpha1.Stale},
		{"holder pod Failed (OOM, eviction): force-unlock", "runner@" + deadPod, &cfPod{name: deadPod, phase: corev1.PodFailed}, v1alpha1.Stale},
		{"holder pod still Running: left alone", "runner@" + deadPod, &cfPod{name: deadPod, phase: corev1.PodRunning}, v1alpha1.Live},
		{"workstation holder: left alone", "steven@laptop", nil, v1alpha1.Foreign},
	} {
		ns := fmt.Sprintf("cf-bookkeep-%d", i+1)
		m1 := cfRef(m, ns, "m1")
		name := object.LockLeaseName("default", m1.Suffix())
		r := cfRow{
			name: "TestBookkeepForceUnlock/" + c.name, cite: fmt.Sprintf("captf: internal/controllers/shared/reconcile_test.go TestBookkeepForceUnlock/%q", c.name),
			ns: ns, objects: []object.Ref{*m1}, leases: []*coordinationv1.Lease{cfLease(ns, name, cfPtr(cfLockID), cfBookkeepInfo(c.who), nil)},
			lease: name, want: c.want, owner: m1, clears: c.want == v1alpha1.Stale, lockID: cfLockID, host: cfHost(c.who), explain: true,
		}
		if c.pod != nil {
			r.pods = []cfPod{*c.pod}
		}
		if c.want == v1alpha1.Stale {
			r.note = "the next Job runs --force-unlock=" + cfLockID + ": Stale, captfClears"
		}
		rows = append(rows, r)
	}

	// internal/jobs/jobs_test.go TestOwnsPod, each case as a lock on the
	// case's object (kind m) whose Who host is the case's pod, the pod
	// absent: Stale when CAPTF owns it, Foreign when not.
	long := strings.Repeat("n", 60)
	for i, c := range []struct {
		label string
		name  string
		pod   string
		owns  bool
	}{
		{"#1 own apply pod", "web", "captf-m-web-apply-a1-abc123-x7k2p", true},
		{"#2 name containing a dash", "web-1", "captf-m-web-1-drift-a12-abc123-x7k2p", true},
		{`#3 "a restore holds the lock too"`, "web", "captf-m-web-restore-a2-abc123-x7k2p", true},
		{"#4 long (hashed) name", long, "captf-m-fb886b452111b2ed-destroy-a3-abc123-x7k2p", true},
		{`#5 "another kind"`, "web", "captf-c-web-apply-a1-abc123-x7k2p", false},
		{`#6 "another object"`, "web", "captf-m-web-1-apply-a1-abc123-x7k2p", false},
		{`#7 "no pod suffix"`, "web", "captf-m-web-apply-a1-abc123", false},
		{`#8 "a plan holds the lock too"`, "web", "captf-m-web-plan-a1-abc123-x7k2p", true},
		{`#9 "unknown op"`, "web", "captf-m-web-bogus-a1-abc123-x7k2p", false},
		{`#10 "no a<attempt>"`, "web", "captf-m-web-apply-1-abc123-x7k2p", false},
		{"#11 malformed attempt", "web", "captf-m-web-apply-ax-abc123-x7k2p", false},
		{"#12 unrelated name", "web", "laptop", false},
		{"#13 empty", "web", "", false},
	} {
		ns := fmt.Sprintf("cf-ownspod-%02d", i+1)
		obj := cfRef(m, ns, c.name)
		name := object.LockLeaseName("default", obj.Suffix())
		who := "runner@" + c.pod
		r := cfRow{
			name: "TestOwnsPod/" + c.label, cite: "captf: internal/jobs/jobs_test.go TestOwnsPod " + c.label,
			ns: ns, objects: []object.Ref{*obj}, absent: []string{c.pod},
			leases: []*coordinationv1.Lease{cfLease(ns, name, cfPtr(cfLockID), cfCheckInfo(who), nil)},
			lease:  name, owner: obj, lockID: cfLockID, host: c.pod, explain: i%4 == 0,
		}
		switch {
		case c.owns:
			r.want, r.clears, r.note = v1alpha1.Stale, true, "CAPTF owns the pod, which is absent: Stale"
		case c.pod == "":
			r.want, r.host, r.note = v1alpha1.Unknown, "", `CAPTF: not its pod (foreign); as a lock, Who "runner@" names no host: Unknown`
			r.absent = nil
		default:
			r.want, r.note = v1alpha1.Foreign, "CAPTF does not own the pod: Foreign"
		}
		rows = append(rows, r)
	}

	// internal/jobs/jobs_test.go TestNames: every Job name of the loop, as
	// the host of a lock on its own object with the pod (name + "-x7k2p")
	// absent: Stale. One namespace per op, nine objects in each.
	hash6 := map[string]string{"apply": "577205", "destroy": "c3512e", "refresh": "2925af", "drift": "9f9caa", "restore": "0b39d4"}
	for _, op := range []string{"apply", "destroy", "refresh", "drift", "restore"} {
		ns := "cf-names-" + op
		for _, name := range []string{"m", strings.Repeat("n", 200), strings.Repeat("x", 40)} {
			for _, ks := range []string{"c", "m", "mp"} {
				k, _ := object.KindByCode(ks)
				obj := cfRef(k, ns, name)
				pod := cfJobName(ks, name, op, math.MaxInt32, hash6[op]) + "-x7k2p"
				lease := object.LockLeaseName("default", obj.Suffix())
				rows = append(rows, cfRow{
					name: fmt.Sprintf("TestNames/%s/%s/len%d", op, ks, len(name)),
					cite: fmt.Sprintf(`captf: internal/jobs/jobs_test.go TestNames loop op=%s name=%q×%d ks=%s: Name(ks, name, op, 2147483647, Hash6("h1:x", op, 1, "")) = %s`, op, name[:1], len(name), ks, strings.TrimSuffix(pod, "-x7k2p")),
					note: "its own pod, absent: Stale",
					ns:   ns, objects: []object.Ref{*obj}, absent: []string{pod},
					leases: []*coordinationv1.Lease{cfLease(ns, lease, cfPtr(cfLockID), cfCheckInfo("runner@"+pod), nil)},
					lease:  lease, want: v1alpha1.Stale, owner: obj, clears: true, lockID: cfLockID, host: pod,
					explain: op == "restore" && ks == "mp",
				})
			}
		}
	}
	{
		ns := "cf-names-exact"
		web := cfRef(m, ns, "web")
		lease := object.LockLeaseName("default", web.Suffix())
		pod := "captf-m-web-apply-a3-abcdef-x7k2p"
		rows = append(rows, cfRow{
			name: "TestNames/exact value", cite: `captf: internal/jobs/jobs_test.go TestNames exact value: Name("m", "web", OpApply, 3, "abcdef") = "captf-m-web-apply-a3-abcdef"`,
			note: "its own pod, absent: Stale", ns: ns, objects: []object.Ref{*web},
			leases: []*coordinationv1.Lease{cfLease(ns, lease, cfPtr(cfLockID), cfCheckInfo("runner@"+pod), nil)},
			lease:  lease, want: v1alpha1.Stale, owner: web, clears: true, lockID: cfLockID, host: pod,
		})
		ns = "cf-names-collision"
		a, b := strings.Repeat("n", 200), strings.Repeat("n", 200)+"x"
		for _, c := range []struct{ obj, podOf string }{{a, b}, {b, a}} {
			obj := cfRef(m, ns, c.obj)
			lease := object.LockLeaseName("default", obj.Suffix())
			pod := cfJobName("m", c.podOf, "apply", 1, "aaaaaa") + "-x7k2p"
			rows = append(rows, cfRow{
				name: fmt.Sprintf("TestNames/no collision/len%d", len(c.obj)),
				cite: fmt.Sprintf(`captf: internal/jobs/jobs_test.go TestNames no collision: Name("m", "n"×200, apply, 1, "aaaaaa") != Name("m", "n"×200+"x", …); lock of the %d-character name held by the other's pod %s`, len(c.obj), pod),
				note: "the other long name's pod: Foreign", ns: ns, objects: []object.Ref{*cfRef(m, ns, a), *cfRef(m, ns, b)}, absent: []string{pod},
				leases: []*coordinationv1.Lease{cfLease(ns, lease, cfPtr(cfLockID), cfCheckInfo("runner@"+pod), nil)},
				lease:  lease, want: v1alpha1.Foreign, owner: obj, lockID: cfLockID, host: pod, explain: c.obj == a,
			})
		}
	}

	// The label-versus-name case of issue 10: a Lease named as web's lock
	// whose backend and owner labels are demo's, held by demo's dead runner
	// pod. CAPTF GETs lock-tfstate-default-<suffix of web> by name
	// (state.LeaseName) and never reads labels: it is web's lock, held by a
	// pod that is not web's.
	{
		ns := "cf-label-vs-name"
		web, demo := cfRef(object.TerraformCluster, ns, "web"), cfRef(object.TerraformCluster, ns, "demo")
		labels := map[string]string{
			"tfstate": "true", "tfstateSecretSuffix": demo.Suffix(), "tfstateWorkspace": "default",
			"app.kubernetes.io/managed-by": "terraform",
		}
		for k, v := range testbed.OwnerLabels(*demo) {
			labels[k] = v
		}
		id := "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
		demoPod := "captf-c-demo-apply-a1-d72d2a-x7k2p"
		name := object.LockLeaseName("default", web.Suffix())
		rows = append(rows, cfRow{
			name: "label versus name", cite: "captf: internal/state/suffix.go LeaseName and internal/locks/stale.go Check step 1 (the lock is read by name only); issue 10 item 1",
			note: "web's lock (by name) held by demo's pod, which is not web's: Foreign, attributed to web; unlock refuses without --id",
			ns:   ns, objects: []object.Ref{*web, *demo}, absent: []string{demoPod},
			leases: []*coordinationv1.Lease{cfLease(ns, name, &id, testbed.LockInfo(id, "root@"+demoPod, t0), labels)},
			lease:  name, want: v1alpha1.Foreign, owner: web, lockID: id, host: demoPod, explain: true,
			check: func(t *testing.T, kc string, l v1alpha1.Lock) {
				if !strings.Contains(l.Reason, "tfstateSecretSuffix") {
					t.Errorf("the reason does not warn of the label that disagrees with the name: %q", l.Reason)
				}
				for _, it := range locksJSON(t, kc).Items {
					if it.Object != nil && it.Object.Name == "demo" {
						t.Errorf("a lock %s is attributed to demo, which has no lock Lease: %s %q", it.Name, it.Verdict, it.Reason)
					}
				}
				if x := explainJSONIn(t, ns, web.String()); x.Verdict != v1alpha1.Foreign || x.Object == nil || x.Object.Name != "web" || x.CAPTFClears {
					t.Errorf("explain %s: %s (clears %v) object %+v: %q", web, x.Verdict, x.CAPTFClears, x.Object, x.Reason)
				}
				before := getLease(t, *web)
				if res := captf(t, kc, "unlock", web.String(), "--confirm"); res.code != 3 {
					t.Errorf("unlock %s --confirm without --id: exit %d, want 3 (refused)\n%s%s", web, res.code, res.out, res.err)
				}
				// Neither demo's unlock nor --all-stale may touch web's lock.
				captf(t, kc, "unlock", demo.String(), "--confirm")
				if res := captf(t, kc, "unlock", "--all-stale", "--confirm"); res.code != 0 {
					t.Errorf("unlock --all-stale --confirm: exit %d\n%s%s", res.code, res.out, res.err)
				}
				assertUnchanged(t, *web, before)
			},
		})
	}
	rows = append(rows, issue19Rows()...)
	return append(rows, issue26Rows()...)
}

// TestConformance replays CAPTF's own test cases of the stale-lock rules
// against the real test-bed and checks that the plugin decides each as CAPTF
// does (issue 10, "The conformance suite").
func TestConformance(t *testing.T) {
	rows := conformanceRows()
	t.Logf("%d rows", len(rows))
	var replays []replayRow
	for _, c := range rows {
		t.Run(c.name, func(t *testing.T) {
			cfSetUp(t, c)
			if l := cfAssert(t, c); l != nil {
				if rp, ok := captureReplay(t, c, *l); ok {
					replays = append(replays, rp)
				}
			}
		})
	}
	// The runner replay: CAPTF's runner steps with the real runtimes,
	// against a copy of each row's lock and state (replay_test.go).
	t.Run("replay", func(t *testing.T) { runReplays(t, replays) })
}

// cfSetUp makes the row's objects, pods and Leases exist as the row says;
// what an earlier row made in a shared namespace is reused or replaced.
func cfSetUp(t *testing.T, c cfRow) {
	t.Helper()
	ctx := context.Background()
	if err := admin.Namespace(ctx, c.ns); err != nil {
		t.Fatal(err)
	}
	if c.setup != nil {
		c.setup(t, c.ns)
	}
	for _, r := range c.objects {
		var err error
		if c.clears || c.world {
			err = admin.Seed(ctx, r, testbed.Seeded{World: &testbed.World{}})
		} else {
			err = admin.Object(ctx, r)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: creating %s: %v", c.cite, r, err)
		}
	}
	pods := admin.Kube.CoreV1().Pods(c.ns)
	for _, name := range c.absent {
		if name == "" {
			continue
		}
		// Pods on no node are deleted at once.
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, p := range c.pods {
		if _, err := pods.Get(ctx, p.name, metav1.GetOptions{}); err == nil {
			continue
		}
		phase := p.phase
		if phase == "" {
			phase = corev1.PodPending
		}
		pod, err := admin.Pod(ctx, c.ns, p.name, nil, phase)
		if err != nil {
			t.Fatalf("%s: creating pod %s: %v", c.cite, p.name, err)
		}
		switch {
		case p.phase == "":
			if _, err := admin.SetPhase(ctx, pod, ""); err != nil {
				t.Fatalf("%s: clearing pod %s's phase: %v", c.cite, p.name, err)
			}
		case p.terminating:
			pod.Finalizers = []string{"captf.io/test-hold"}
			if _, err := pods.Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := pods.Delete(ctx, p.name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	leases := admin.Kube.CoordinationV1().Leases(c.ns)
	for _, l := range c.leases {
		l = l.DeepCopy()
		l.Namespace = c.ns
		old, err := leases.Get(ctx, l.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		case err == nil:
			// The same Lease later in its life: labels, annotations and
			// spec become the row's.
			old.Labels, old.Annotations, old.Spec = l.Labels, l.Annotations, l.Spec
			_, err = leases.Update(ctx, old, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("%s: writing Lease %s: %v", c.cite, l.Name, err)
		}
	}
}

// cfAssert checks what locks (and, for some rows, explain) say of the row's
// lock, and returns it (nil for a row without a lock Lease).
func cfAssert(t *testing.T, c cfRow) *v1alpha1.Lock {
	t.Helper()
	kc := kubeconfigIn(t, c.ns)
	list := locksJSON(t, kc)
	for _, it := range list.Items {
		if !strings.HasPrefix(it.Name, object.LockLeasePrefix) {
			t.Errorf("%s\n  Lease %s is listed as a lock (%s)", c.cite, it.Name, it.Verdict)
		}
	}
	if c.lease == "" {
		for _, it := range list.Items {
			if it.Object != nil && it.Object.Kind == c.owner.Kind.Name && it.Object.Name == c.owner.Name {
				t.Errorf("%s\n  %s has no lock Lease, yet %s is listed as its lock", c.cite, c.owner, it.Name)
			}
		}
		x := explainJSONIn(t, c.ns, c.owner.String())
		if x.Verdict != c.want || x.CAPTFClears {
			t.Errorf("%s\n  explain %s: %s (clears %v) %q; want %s", c.cite, c.owner, x.Verdict, x.CAPTFClears, x.Reason, c.want)
		}
		return nil
	}
	var l *v1alpha1.Lock
	for i := range list.Items {
		if list.Items[i].Name == c.lease {
			l = &list.Items[i]
		}
	}
	if l == nil {
		t.Fatalf("%s\n  Lease %s is not listed", c.cite, c.lease)
	}
	clears, certain := c.clears, c.certain
	if l.Verdict != c.want || l.CAPTFClears != clears {
		t.Errorf("%s\n  got %s (captfClears %v): %q\n  want %s (captfClears %v)%s", c.cite, l.Verdict, l.CAPTFClears, l.Reason, c.want, clears, cfWhy(c.note))
	}
	switch {
	case c.owner == nil && l.Object != nil:
		t.Errorf("%s\n  attributed to %s %s, want no object", c.cite, l.Object.Kind, l.Object.Name)
	case c.owner != nil && (l.Object == nil || l.Object.Kind != c.owner.Kind.Name || l.Object.Name != c.owner.Name):
		t.Errorf("%s\n  attributed to %+v, want %s %s", c.cite, l.Object, c.owner.Kind.Name, c.owner.Name)
	}
	if c.realID != nil {
		c.lockID = *c.realID
	}
	if c.want != v1alpha1.Unlocked && (l.Lock == nil || l.Lock.ID != c.lockID) {
		t.Errorf("%s\n  lock %+v, want ID %q", c.cite, l.Lock, c.lockID)
	}
	if c.want == v1alpha1.Unlocked && l.Lock != nil {
		t.Errorf("%s\n  an unlocked Lease has lock %+v", c.cite, l.Lock)
	}
	if c.host != "" {
		own := c.want == v1alpha1.Stale || c.want == v1alpha1.Live
		if h := l.Holder; h == nil || h.Host != c.host || h.OwnPod != own {
			t.Errorf("%s\n  holder %+v, want host %s (own pod %v)", c.cite, l.Holder, c.host, own)
		}
	}
	if l.ActiveJob != c.active {
		t.Errorf("%s\n  activeJob %q, want %q", c.cite, l.ActiveJob, c.active)
	}
	switch d := l.CAPTFDeletesLease; {
	case c.deletes == "" && d != nil:
		t.Errorf("%s\n  captfDeletesLease %+v, want null", c.cite, *d)
	case c.deletes != "" && (d == nil || d.Path != c.deletes || d.Certain != certain || d.When == "" || d.Why == ""):
		t.Errorf("%s\n  captfDeletesLease %+v, want path %s (certain %v)", c.cite, d, c.deletes, certain)
	}
	for _, s := range c.says {
		if !strings.Contains(l.Reason, s) {
			t.Errorf("%s\n  the reason %q\n  lacks %q", c.cite, l.Reason, s)
		}
	}
	if c.explain || len(c.action) > 0 || len(c.notAction) > 0 || c.disagrees != 0 {
		x := explainJSONIn(t, c.ns, "lease/"+c.lease)
		if x.Verdict != l.Verdict || x.Reason != l.Reason || x.CAPTFClears != l.CAPTFClears {
			t.Errorf("%s\n  explain lease/%s: %s (clears %v) %q\n  locks: %s (clears %v) %q", c.cite, c.lease, x.Verdict, x.CAPTFClears, x.Reason, l.Verdict, l.CAPTFClears, l.Reason)
		}
		if (c.owner == nil) != (x.Object == nil) || (x.Object != nil && x.Object.Name != c.owner.Name) {
			t.Errorf("%s\n  explain attributes it to %+v", c.cite, x.Object)
		}
		if (x.CAPTFDeletesLease == nil) != (l.CAPTFDeletesLease == nil) || (x.CAPTFDeletesLease != nil && *x.CAPTFDeletesLease != *l.CAPTFDeletesLease) {
			t.Errorf("%s\n  explain captfDeletesLease %+v, locks %+v", c.cite, x.CAPTFDeletesLease, l.CAPTFDeletesLease)
		}
		if j := x.Context.ActiveJob; (j == nil) != (c.active == "") || (j != nil && (j.Name != c.active || j.From != "jobs")) {
			t.Errorf("%s\n  explain's active Job %+v, want %q", c.cite, j, c.active)
		}
		for _, s := range c.action {
			if !strings.Contains(x.ControllerAction, s) {
				t.Errorf("%s\n  explain's action %q\n  lacks %q", c.cite, x.ControllerAction, s)
			}
		}
		for _, s := range c.notAction {
			if strings.Contains(x.ControllerAction, s) {
				t.Errorf("%s\n  explain's action %q\n  says %q", c.cite, x.ControllerAction, s)
			}
		}
		waits := strings.Contains(x.Disagreement, "so that reconcile waits")
		switch {
		case c.disagrees == 1 && (x.Disagreement == "" || waits):
			t.Errorf("%s\n  disagreement %q, want one CAPTF acts on at its next reconcile", c.cite, x.Disagreement)
		case c.disagrees == 2 && !waits:
			t.Errorf("%s\n  disagreement %q, want one that waits", c.cite, x.Disagreement)
		}
	}
	if c.check != nil {
		c.check(t, kc, *l)
	}
	return l
}

func cfWhy(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}
