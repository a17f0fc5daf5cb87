package e2e

// The rows of issue 26: where CAPTF starts the Job, or would, and what
// the runtime then does with the lock decides whether it clears. Each
// row cites CAPTF's files and the runtimes' (the newest stored versions
// read; docs/how-it-decides.md lists them). The rows the runner replay
// (replay_test.go) covers are those whose lock CAPTF clears and those
// with a replay step: false because of what the runtime does.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/inspect"
	"github.com/captf-io/kubectl-captf/pkg/jobgate"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// The CAPTF and runtime files of issue 26, at the commits read.
const (
	cfPlan          = "internal/runner/plan.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfReconcileNew  = "internal/controllers/shared/reconcile.go@ade7dc79d93b624f3a23cffb2e55f6487a315ab7"
	cfRunGo         = "internal/controllers/shared/run.go@81a0ff422f986130946f62ca8e093aeff3e5fc2c"
	cfRunLease      = "internal/runlease/runlease.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	cfSlots         = "internal/controllers/shared/slots.go@5150d7d990bae8cd86fedda58ae5122c571ca087"
	cfConditions    = "api/v1alpha1/conditions_consts.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517"
	tfState         = "hashicorp/terraform internal/backend/remote-state/kubernetes/backend_state.go@060255a9d5c6bf699a00199abefdcfdf77b9c832 StateMgr"
	tofuState       = "opentofu/opentofu internal/backend/remote-state/kubernetes/backend_state.go@122e767c142dd632c4ecd1641689f62fbd7f2a75 StateMgr"
	tfClient        = "hashicorp/terraform internal/backend/remote-state/kubernetes/client.go@019f88dd91c5119fb070324f7a123fb061e696af Get, Unlock, getLockInfo"
	tofuClient      = "opentofu/opentofu internal/backend/remote-state/kubernetes/client.go@116af602750c020637f7f6c260262670c6375371 Get, Unlock, getLockInfo"
	cfBackendLabels = "internal/state/labels.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 BackendLabels, InputsHashAnnotation"
	cfFixtures      = "internal/state/testdata/fixtures/terraform-relabeled.yaml@d6986f4646de003dbde2b12ec279505307a1b667"
	cfReaderGo      = "internal/state/reader.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 Read (ErrStateInconsistent)"
	// cfPullFallback: both stored versions agree on where a pull failure
	// with no image left is written (4b3ba278; 3c7bece4 adds apply and
	// plan, on ApplyJobSucceeded).
	cfPullFallback = "internal/controllers/shared/pullfallback.go@4b3ba278faff2ad1a0d02cd1a5329583a79a9d1c"
	// cfSpec is where CAPTF passes the force-unlock ID to a Job: its
	// runner container's --force-unlock=<ID> (and --image=<ref>).
	cfSpec = "internal/jobs/spec.go@d6986f4646de003dbde2b12ec279505307a1b667"
	// cfBookkeeping148 is where bookkeeping rewrites DriftJobSucceeded
	// from the newest finished drift or refresh Job (setDriftJob: True,
	// DriftJobDeadlineExceeded or DriftJobFailed).
	cfBookkeeping148 = "internal/controllers/shared/bookkeeping.go@148aa21efa139ad15203df93fb94de9c6b88260e"
	// tofuClient126 is the OpenTofu the replay runs, as the test-bed
	// built it (its module source, v1.12.6): Get reads the base Secret
	// by its name.
	tofuClient126 = "opentofu/opentofu v1.12.6 internal/backend/remote-state/kubernetes/client.go Get"
)

func cf26(parts ...string) string {
	return "captf and the runtimes (issue 26): " + strings.Join(parts, ", ")
}

// unlockAdvised requires explain's "What you can do" to give the unlock
// command and not to say that nothing is required.
func unlockAdvised(r object.Ref) func(t *testing.T, kc string, l v1alpha1.Lock) {
	return unlockAdvisedOf(r, func() string { return cfLockID })
}

// unlockAdvisedOf is unlockAdvised for the lock ID id gives, once the
// row's setup took the lock.
func unlockAdvisedOf(r object.Ref, id func() string) func(t *testing.T, kc string, l v1alpha1.Lock) {
	return func(t *testing.T, _ string, _ v1alpha1.Lock) {
		x := explainJSONIn(t, r.Namespace, r.String())
		unlock := false
		for _, a := range x.Advice {
			if strings.Contains(a.Comment, "nothing is required") {
				t.Errorf("explain %s says %q though no Job clears the lock", r, a.Comment)
			}
			if strings.Contains(a.Command, " unlock "+r.String()+" ") && strings.Contains(a.Command, "--id '"+id()+"'") {
				unlock = true
			}
		}
		if !unlock {
			t.Errorf("explain %s gives no unlock command: %+v", r, x.Advice)
		}
	}
}

// backup26 makes the state backup of serial 3 a row's restore asks for,
// so that CAPTF really starts the restore Job (restore.go restoreTarget).
func backup26(t *testing.T, r object.Ref) {
	t.Helper()
	ctx := context.Background()
	uid, err := admin.UID(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.StateBackup(ctx, r, "cl-"+r.Suffix(), 3, uid); err != nil {
		t.Fatal(err)
	}
}

// relabel26 changes r's state Secret tfstate-default-<suffix> as the
// row needs it (labels, annotations, data), as someone editing it would.
func relabel26(t *testing.T, r object.Ref, change func(*corev1.Secret)) {
	t.Helper()
	ctx := context.Background()
	name := object.StateSecretName("default", r.Suffix())
	s, err := admin.Kube.CoreV1().Secrets(r.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(s)
	if _, err := admin.Kube.CoreV1().Secrets(r.Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// heldByNames26 is a row of a state CAPTF's next read holds on its
// Secrets' names (reader.go orderChunks, readState): seeded with
// StateReadable True, its state Secrets then changed by change, the lock
// is held by CAPTF (no Job but a restore) and explain says why, with
// the finding in the words evidence gives.
func heldByNames26(name, id, finding, note string, change func(t *testing.T, ctx context.Context, ns string, r object.Ref), evidence func(object.Ref) string) cfRow {
	row, r := stale19(name, id, object.TerraformCluster,
		cf26(cfReader+" orderChunks (ErrStateInconsistent: "+finding+")", cfReconcile+" readState, run (held && !restore)"))
	row.setup = func(t *testing.T, ns string) {
		seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: &testbed.World{}})
		change(t, context.Background(), ns, *r)
	}
	row.note = note + ": CAPTF's next pass writes StateReadable False/StateInconsistent and starts no Job but a restore"
	row.says = []string{"CAPTF will not clear it", "CAPTF's next read of its state fails on the state Secrets' names (" + evidence(*r) + ")", "StateReadable False/StateInconsistent", "no Job but a restore starts"}
	row.action = []string{"Nothing: CAPTF's next read of its state fails"}
	row.check = unlockAdvised(*r)
	return row
}

// issue26Rows are the rows of issue 26, cases 1 to 5, and of its review
// (review26: 1e, 1f, 6, 7).
func issue26Rows() []cfRow {
	var rows []cfRow
	tc := object.TerraformCluster
	seed := func(r *object.Ref, s testbed.Seeded) func(t *testing.T, ns string) {
		return func(t *testing.T, _ string) { seed19(t, *r, s) }
	}
	in := func(w testbed.World) *testbed.World { return &w }
	noStateInit := &cfReplay{step: "init", output: []string{"already locked by another"}}

	// Case 1: no state Secret. The backend's StateMgr locks to write an
	// empty state, which fails while the stale lock is held: init
	// fails, and the force-unlock step never runs.
	{
		row, r := stale19("issue26/1a never applied: the first apply's init fails", "cf26-1a", tc,
			cf26(cfPlan+" Steps", cfDecide+" decide (NoState)", tfState, tofuState, tfClient, tofuClient))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{NoState: true, Unprovisioned: true})})
		row.note = "StateReadable Unknown/StateNotFound and no state Secret: the apply Job runs init, whose StateMgr cannot lock"
		row.says = []string{"no Job clears it", "StateReadable Unknown/StateNotFound", "the first apply runs init first", "init fails and the force-unlock step never runs", "unlock it, and the first apply proceeds"}
		row.action = []string{"No Job clears it", "init fails and the force-unlock step never runs"}
		row.replay = noStateInit
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue26/1b lost state: the restore's init fails", "cf26-1b", tc,
			cf26(cfReconcile+" run (held && !restore)", cfRestore+" restoreTarget", cfPlan+" Steps (restore: init, force-unlock, state push)", cfConditions+" RestoreFailedReason", tfState, tofuState))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "False", "StateLost")), World: in(testbed.World{NoState: true})})
			backup26(t, *r)
		}
		row.note = "a provisioned object whose state Secret is gone: CAPTF holds it (StateLost) and starts only the restore asked for, whose init fails on the lock"
		row.says = []string{"no Job clears it", "StateReadable False/StateLost", "the restore Job runs init first", "CAPTF does not retry it for the same serial", "remove the captf.io/restore-state annotation, wait until status.lastRestoredSerial is cleared, and set the annotation again"}
		row.action = []string{"No Job clears it"}
		row.replay = noStateInit
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue26/1c chunks without a base: the restore's init fails", "cf26-1c", tc,
			cf26(cfReader+" Read, orderChunks (StateInconsistent)", cfRestore+" restoreTarget", tfClient, tofuClient, tfState, tofuState))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "False", "StateInconsistent")), World: in(testbed.World{NoState: true})})
			if err := admin.StateChunk(context.Background(), *r, "cl-"+r.Suffix(), 1); err != nil {
				t.Fatal(err)
			}
			backup26(t, *r)
		}
		row.note = "CAPTF finds a chunk and no base (StateInconsistent, held): the runtime reads the base Secret alone, finds none, and its init fails on the lock as with no state"
		row.says = []string{"if the inconsistency is chunks without their base Secret", "the restore's init fails", "its force-unlock step never runs"}
		// OpenTofu reads a chunk without its base as no state and fails on
		// the lock; terraform v1.11.4 lists the chunks and crashes.
		row.replay = &cfReplay{step: "init", output: []string{"already locked by another", "panic: runtime error: index out of range"}}
		rows = append(rows, row)
	}

	// Case 1, as the issue reproduced it: a live object whose state CAPTF
	// read (StateReadable True/StateRead), a runner SIGKILLed mid-apply by
	// the real terraform, then the state Secret deleted. CAPTF's next
	// reconcile finds no state, and whichever Job it starts runs init,
	// whose StateMgr cannot lock: the plugin lists the live owner's state
	// Secrets' metadata to see it.
	{
		row, r := stale19("issue26/1d live, state Secret deleted after StateRead: the next Job's init fails", "cf26-1d", tc,
			cf26(cfPlan+" Steps", tfState, tofuState, tfClient, tofuClient))
		id := new(string)
		row.leases, row.realID = nil, id
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{NoState: true})})
			ctx := context.Background()
			got, err := tf.LockAs(ctx, admin.Kube, *r, row.host)
			if err != nil {
				t.Fatal(err)
			}
			*id = got
			if err := admin.Kube.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "tfstate=true,tfstateSecretSuffix=" + r.Suffix()}); err != nil {
				t.Fatal(err)
			}
		}
		row.note = "terraform's lock of a SIGKILLed apply, the state Secret deleted after CAPTF recorded StateReadable True/StateRead: the next Job's init fails on the lock"
		row.says = []string{"no Job clears it", "no state Secret of suffix " + r.Suffix() + " exists, though CAPTF last recorded StateReadable True/StateRead: it was deleted since", "its next Job runs init first", "init fails and the force-unlock step never runs", "unlock it, and the next Job proceeds"}
		row.action = []string{"No Job clears it", "init fails and the force-unlock step never runs"}
		row.replay = noStateInit
		row.check = unlockAdvisedOf(*r, func() string { return *id })
		rows = append(rows, row)
	}

	// Case 2: lock info CAPTF decodes and the runtime does not.
	{
		row, r := stale19("issue26/2 lock info the runtime cannot decode", "cf26-2", tc,
			cf26(cfBookkeeping+" checkLock (ID, Operation, Who, Version, Created)", cfPlan+" Steps (OKIf)", tfClient, tofuClient))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		info := strings.TrimSuffix(cfCheckInfo("root@"+row.host), "}") + `,"Info":5}`
		row.leases[0].Annotations["app.terraform.io/lock-info"] = info
		row.note = "statemgr.LockInfo.Info is a string: the runtime's Unlock fails to decode before it compares IDs"
		row.says = []string{"not as terraform and OpenTofu read it (json: cannot unmarshal number into Go struct field LockInfo.Info of type string)", "which CAPTF's runner does not accept"}
		row.action = []string{"It never clears through a Job: unlock it."}
		row.replay = &cfReplay{step: "force-unlock", output: []string{"cannot unmarshal number into Go struct field LockInfo.Info of type string"}}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue26/2b lock-info ID differs from holderIdentity", "cf26-2b", tc,
			cf26(cfBookkeeping+" checkLock (the info's ID)", cfPlan+" Steps (OKIf: does not match existing lock)", tfClient, tofuClient))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		row.leases[0].Annotations["app.terraform.io/lock-info"] = strings.Replace(cfCheckInfo("root@"+row.host), cfLockID, "9f1c0c5e-0000-4000-8000-00000000beef", 1)
		row.note = "both steps succeed as CAPTF's runner counts success, and the lock stays"
		row.says = []string{"does not match existing lock", "the runner counts that as success and the lock stays"}
		row.replay = &cfReplay{step: "force-unlock", output: []string{"does not match existing lock"}, accepts: "terraform tofu"}
		rows = append(rows, row)
	}
	// Review26g F5, review26h m2, review26i F1: the runner searches only
	// the last 64 KiB of the step's stderr for "does not match existing
	// lock". terraform prints the whole lock info after it; OpenTofu drops
	// a line of 64 KiB or more, prefixes each line it keeps and shows each
	// control character as a three-byte picture. Either way the lock stays.
	for _, c := range []struct {
		row, ns, info, note, accepts string
		says                         []string
	}{
		{"issue26/2c lock-info ID differs, behind 70,000 bytes of lock info", "cf26-2c", strings.Repeat("i", 70000),
			"terraform's answer falls out of the runner's 64 KiB tail and the step fails; OpenTofu drops the Info line and the runner accepts the answer",
			"tofu", []string{"does not match existing lock\" with 70", "which may hide that answer from CAPTF's runner", "either way the lock stays"}},
		{"issue26/2d lock-info ID differs, behind 4,000 lines of lock info", "cf26-2d", strings.Repeat(`\n`, 4000),
			"terraform prints 4 KB after the answer and the runner sees it; OpenTofu's prefixed lines push it out",
			"terraform", []string{"which may hide that answer from CAPTF's runner"}},
		{"issue26/2e lock-info ID differs, behind 22,000 control characters of lock info", "cf26-2e", strings.Repeat(strings.Repeat(`\u0001`, 1000)+`\n`, 22),
			"terraform prints 22 KB after the answer and the runner sees it; OpenTofu's control pictures triple them and push it out",
			"terraform", []string{"which may hide that answer from CAPTF's runner"}},
	} {
		row, r := stale19(c.row, c.ns, tc,
			cf26("internal/runner/exec.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 Exec, tailWriter (MaxTail 64 KiB), StepResult.Failed", cfPlan+" Steps (OKIf)", tfClient, tofuClient))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		info := strings.Replace(cfCheckInfo("root@"+row.host), cfLockID, "9f1c0c5e-0000-4000-8000-00000000beef", 1)
		row.leases[0].Annotations["app.terraform.io/lock-info"] = strings.TrimSuffix(info, "}") + `,"Info":"` + c.info + `"}`
		row.note, row.says = c.note+"; the lock stays with both", c.says
		row.replay = &cfReplay{step: "force-unlock", output: []string{"does not match existing lock"}, accepts: c.accepts}
		rows = append(rows, row)
	}

	// Review26 F1: state Secrets whose labels are not the map CAPTF
	// passes the backend (CAPTF ships terraform-relabeled fixtures of
	// that shape). terraform lists the state with a selector of the
	// whole map and finds none, so its init locks and fails on the held
	// lock; OpenTofu reads the base by name and clears it. Nothing the
	// plugin reads names the image's runtime: captfClears is false.
	{
		row, r := stale19("issue26/6 state Secrets labelled for another cluster: terraform's init fails, OpenTofu's clears", "cf26-6", tc,
			cf26(cfBackendLabels, cfFixtures, cfReaderGo, cfPlan+" Steps", tfState, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{})})
			relabel26(t, *r, func(s *corev1.Secret) { s.Labels[testbed.ClusterNameLabel] = "another-cluster" })
		}
		row.note = "CAPTF reads state by suffix and workspace (StateReadable True), the runtime's init by the labels CAPTF passes (terraform) or by name (OpenTofu)"
		row.says = []string{"whether a Job clears it depends on the runtime", `cluster.x-k8s.io/cluster-name="another-cluster"`, "with a Terraform image, init lists the state with a selector of those labels, finds none", "with an OpenTofu image, init reads the base Secret by its name and the force-unlock clears the lock", "CAPTF records nothing of which runtime its image holds"}
		row.action = []string{"Whether a Job clears it depends on the runtime in the image"}
		row.replay = &cfReplay{step: "init", output: []string{"already locked by another"}, clearedBy: "tofu"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26b N3: a state Secret without app.kubernetes.io/managed-by,
	// which both runtimes' getLabels add to the map they select by:
	// terraform lists by that selector and finds none, OpenTofu reads the
	// base by name.
	{
		row, r := stale19("issue26/8 a state Secret without managed-by=terraform: terraform's init fails, OpenTofu's clears", "cf26-8", tc,
			cf26(cfBackendLabels, cfPlan+" Steps", tfState, tofuClient126+", getLabels"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{})})
			relabel26(t, *r, func(s *corev1.Secret) { delete(s.Labels, "app.kubernetes.io/managed-by") })
		}
		row.note = "a hand-made or copied state Secret: CAPTF's reader ignores managed-by, the runtime's selector does not"
		row.says = []string{"whether a Job clears it depends on the runtime", `app.kubernetes.io/managed-by (missing; the runtime's selector requires "terraform")`}
		row.action = []string{"Whether a Job clears it depends on the runtime in the image"}
		row.replay = &cfReplay{step: "init", output: []string{"already locked by another"}, clearedBy: "tofu"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26 F7: a lock ID that begins with "-" is a flag to the
	// runtime's force-unlock, to which CAPTF passes it bare after -force.
	{
		row, r := stale19("issue26/7 a lock ID the runtime takes for a flag", "cf26-7", tc,
			cf26(cfPlan+" Steps (force-unlock -force <ID>)", cfBookkeeping+" checkLock (the info's ID)"))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		const flagID = "-x-9f1c0c5e"
		row.leases[0].Spec.HolderIdentity = cfPtr(flagID)
		row.leases[0].Annotations["app.terraform.io/lock-info"] = strings.Replace(cfCheckInfo("root@"+row.host), cfLockID, flagID, 1)
		row.lockID = flagID
		row.note = "Go's flag package reads -x-9f1c0c5e as a flag: force-unlock fails before it reads the state"
		row.says = []string{`the ID CAPTF passes to force-unlock -force, "-x-9f1c0c5e", begins with "-"`, "fails with an error CAPTF's runner does not accept"}
		row.action = []string{"It never clears through a Job: unlock it."}
		row.replay = &cfReplay{step: "force-unlock", output: []string{"flag provided but not defined: -x-9f1c0c5e"}}
		row.check = unlockAdvisedOf(*r, func() string { return flagID })
		rows = append(rows, row)
	}

	// Review26g F5, review26h m3: an ID that begins with "-" and quotes
	// an answer the runner accepts, in the flag's name or as a bad value
	// for -force: the flag error quotes it, and the runner takes the
	// failed step for a success; the lock stays.
	for _, c := range []struct{ row, ns, id, says, output string }{
		{"issue26/7d a flag-like lock ID that quotes an answer the runner accepts", "cf26-7d", "-x does not match existing lock",
			`begins with "-"`, "flag provided but not defined: -x does not match existing lock"},
		{"issue26/7e a lock ID that gives -force a value quoting an accepted answer", "cf26-7e", "-force=does not match existing lock",
			"a bad value for -force", `invalid boolean value "does not match existing lock" for -force`},
	} {
		row, r := stale19(c.row, c.ns, tc,
			cf26(cfPlan+" Steps (force-unlock -force <ID>, OKIf)", "internal/runner/exec.go@16ca67d3711e1eb42cfbf3acd89c0d42f6970517 StepResult.Failed (a substring of the tail)"))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		row.leases[0].Spec.HolderIdentity = cfPtr(c.id)
		row.leases[0].Annotations["app.terraform.io/lock-info"] = strings.Replace(cfCheckInfo("root@"+row.host), cfLockID, c.id, 1)
		row.lockID = c.id
		row.note = "force-unlock fails on the flag, and its error quotes the ID"
		row.says = []string{c.says, "the runner takes the failed step for a success", "the lock stays"}
		row.action = []string{c.says, "the runner takes the failed step for a success", "It never clears through a Job: unlock it."}
		row.replay = &cfReplay{step: "force-unlock", output: []string{c.output}, accepts: "terraform tofu"}
		id := c.id
		row.check = unlockAdvisedOf(*r, func() string { return id })
		rows = append(rows, row)
	}

	// Review26g F4: an ID no process argument can hold: a NUL byte, or
	// MAX_ARG_STRLEN bytes with --force-unlock=. The runner container
	// never starts; the replay's force-unlock does not either.
	for _, c := range []struct{ row, ns, id, says, output, unprintable string }{
		{"issue26/7b a lock ID holding a NUL byte", "cf26-7b", "9f1c0c5e\x00-x", "holds a NUL byte, which no process argument can", "invalid argument", "holds characters that cannot be pasted safely"},
		{"issue26/7c a lock ID longer than a process argument may be", "cf26-7c", strings.Repeat("9", inspect.MaxArg), "bytes long: no process takes an argument of 131072 bytes or more", "argument list too long", "(Linux's MAX_ARG_STRLEN)"},
	} {
		row, r := stale19(c.row, c.ns, tc,
			cf26(cfPlan+" Steps (force-unlock -force <ID>)", cfSpec+" args (--force-unlock=<ID>)", cfBookkeeping+" checkLock (the info's ID)"))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		row.leases[0].Spec.HolderIdentity = cfPtr(c.id)
		info, err := json.Marshal(map[string]string{"ID": c.id, "Operation": "OperationTypeApply", "Info": "", "Who": "root@" + row.host, "Version": "1.11.4", "Created": "2026-09-26T15:53:38Z", "Path": ""})
		if err != nil {
			panic(err)
		}
		row.leases[0].Annotations["app.terraform.io/lock-info"] = string(info)
		row.lockID = c.id
		row.note = "the kernel refuses the argument: the step never starts"
		row.says = []string{c.says, "every Job CAPTF starts fails and the lock stays"}
		row.action = []string{"It never clears through a Job: unlock it."}
		row.replay = &cfReplay{step: "force-unlock", output: []string{c.output}}
		// No argv can carry either ID: the unlock command is not printed,
		// and the advice says why (review26i P4).
		ref, why := *r, c.unprintable
		row.check = func(t *testing.T, _ string, _ v1alpha1.Lock) {
			x := explainJSONIn(t, ref.Namespace, ref.String())
			said := false
			for _, a := range x.Advice {
				said = said || (a.Command == "" && strings.Contains(a.Unprintable, why))
				if strings.Contains(a.Command, " unlock ") {
					t.Errorf("explain %s prints an unlock command no process can take: %.200s", ref, a.Command)
				}
			}
			if !said {
				t.Errorf("explain %s does not say why no unlock command is printed (%q): %+v", ref, why, x.Advice)
			}
		}
		rows = append(rows, row)
	}

	// Review26 F6: StateInconsistent also covers a base Secret without
	// its tfstate key; both runtimes' Get return no state for it, so the
	// restore's init locks and fails on the held lock.
	{
		row, r := stale19("issue26/1e a base Secret without its tfstate key: the restore's init fails", "cf26-1e", tc,
			cf26(cfReaderGo, cfRestore+" restoreTarget", tfClient, tofuClient126, tfState, tofuState))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "False", "StateInconsistent")), World: in(testbed.World{})})
			relabel26(t, *r, func(s *corev1.Secret) { delete(s.Data, "tfstate") })
			backup26(t, *r)
		}
		row.note = "CAPTF finds the base without data (StateInconsistent, held) and starts the restore asked for; the runtime reads no state and its init fails on the lock"
		row.says = []string{"or a base Secret without its tfstate key", "the restore's init fails", "its force-unlock step never runs"}
		row.replay = &cfReplay{step: "init", output: []string{"already locked by another"}}
		rows = append(rows, row)
	}

	// Review26 F2: StateLost for an immutable kind whose base Secret is
	// present without the inputs hash. The Secret's metadata tells it
	// from a missing one: the restore's init reads the state and its
	// force-unlock clears the lock, with both runtimes. captfClears stays
	// false because the restore may not start (its backup must exist).
	{
		row, r := stale19("issue26/1f StateLost with its state Secret: the restore clears", "cf26-1f", object.TerraformMachine,
			cf26(cfConditions+" StateLostReason", cfBackendLabels, cfRestore+" restoreTarget", cfPlan+" Steps (restore)", tfClient, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "False", "StateLost")), World: in(testbed.World{})})
			relabel26(t, *r, func(s *corev1.Secret) { delete(s.Annotations, "captf.io/inputs-hash") })
			backup26(t, *r)
		}
		row.note = "StateLost covers a state Secret without captf.io/inputs-hash for an immutable kind: the state exists, the restore's steps clear the lock"
		row.says = []string{"CAPTF clears it with terraformmachine/web's next Job, if a Job starts"}
		row.notAction = []string{"No Job clears it"}
		row.replay = &cfReplay{clearedBy: "terraform tofu"}
		rows = append(rows, row)
	}

	// Review26g F6: a state CAPTF cannot read (StateCorrupt: its payload
	// is no gzip) with a restore asked for: the restore runs init before
	// its force-unlock and its push, and init reads the same state, on
	// which terraform and OpenTofu fail too.
	{
		row, r := stale19("issue26/9 a corrupt state with a restore asked: the restore's init fails on the state", "cf26-9", tc,
			cf26(cfRestore+" restoreTarget", cfPlan+" Steps (restore: init, force-unlock, state push)", "internal/runner/restore.go@1176786fc9c7a60c57ffb2d5252c227fcc54ac91 AssembleRestore (a local file)", tfClient, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "False", "StateCorrupt")), World: in(testbed.World{})})
			relabel26(t, *r, func(s *corev1.Secret) { s.Data["tfstate"] = []byte("this is no gzip stream") })
			backup26(t, *r)
		}
		row.note = "CAPTF starts the restore; its init reads the corrupt state and fails, so its force-unlock never runs"
		row.says = []string{"no Job clears it: the restore Job asked for runs init first, which reads the state CAPTF could not read (StateReadable False/StateCorrupt)", "terraform and OpenTofu fail on it too", "the unreadable state Secrets are repaired or removed"}
		row.action = []string{"No Job clears it. The Job CAPTF creates for terraformcluster/web is the restore asked for"}
		row.replay = &cfReplay{step: "init", output: []string{"Error loading state"}}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26h m1: CAPTF's reader refuses a state file of format
	// version 1 to 3 (StateCorrupt, "unsupported state file version"),
	// which both runtimes read and upgrade: the restore's init reads it
	// and its force-unlock clears the lock. Not StaleUnreadableState.
	{
		row, r := stale19("issue26/9b a state of an old format version CAPTF refuses, restored: both runtimes read it", "cf26-9b", tc,
			cf26(cfReader+" parse (ErrUnsupportedStateVersion)", "internal/controllers/shared/reconcile.go@e049ea25 readState (StateCorrupt)", cfPlan+" Steps (restore)", tfClient, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(testbed.Condition("StateReadable", "False", "StateCorrupt", "state: unsupported state file version: 3", time.Now())), World: in(testbed.World{})})
			var gz bytes.Buffer
			w := gzip.NewWriter(&gz)
			if _, err := w.Write([]byte(`{"version":3,"terraform_version":"0.11.14","serial":5,"lineage":"3f0c1e22-1111-2222-3333-444455556666","modules":[{"path":["root"],"outputs":{},"resources":{},"depends_on":[]}]}`)); err != nil || w.Close() != nil {
				t.Fatal("gzip")
			}
			relabel26(t, *r, func(s *corev1.Secret) { s.Data["tfstate"] = gz.Bytes() })
			backup26(t, *r)
		}
		row.note = "CAPTF refuses the format version, terraform and OpenTofu upgrade it: the restore's steps clear the lock"
		row.says = []string{"if a Job starts", `StateReadable False/StateCorrupt says "state: unsupported state file version: 3"`, "which terraform and OpenTofu read and upgrade"}
		row.notAction = []string{"No Job clears it"}
		row.replay = &cfReplay{clearedBy: "terraform tofu"}
		rows = append(rows, row)
	}
	// Review26h m4: a gap in the chunks' numbers beside a whole base,
	// a restore asked for: CAPTF's next read holds the state; the
	// restore's init crashes with terraform and reads the base alone
	// with OpenTofu.
	{
		row, r := stale19("issue26/1r a gap in the chunks' numbers, restored: terraform's init crashes, OpenTofu's clears", "cf26-1r", tc,
			cf26(cfReaderGo+" (orderChunks: a missing chunk)", cfPlan+" Steps (restore)", tfClient, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"}, Status: status19(cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{})})
			backup26(t, *r)
			base, err := admin.Kube.CoreV1().Secrets(ns).Get(context.Background(), object.StateSecretName("default", r.Suffix()), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			part := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: base.Name + "-part-2", Namespace: ns, Labels: base.Labels}, Data: map[string][]byte{"tfstate": []byte("left over")}}
			if _, err := admin.Kube.CoreV1().Secrets(ns).Create(context.Background(), part, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		row.note = "terraform indexes the Secrets by number and crashes on the gap; OpenTofu reads the base, which holds the whole state"
		row.says = []string{"its state Secrets' names are not the chunks CAPTF's reader accepts", "with a Terraform image, init crashes on the gap", "with an OpenTofu image, init reads the base Secret alone"}
		row.replay = &cfReplay{step: "init", output: []string{"index out of range"}, clearedBy: "tofu"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26b N4: a first apply's init wrote the empty state Secret
	// (StateMgr locks, writes, unlocks) and its pod was killed after its
	// apply took the lock, before CAPTF's next pass: StateReadable still
	// says StateNotFound, and the next Job's init reads the Secret.
	{
		row, r := stale19("issue26/1g StateNotFound, but the first init wrote the state Secret: the next Job clears", "cf26-1g", tc,
			cf26(cfPlan+" Steps", tfState, tofuState, tfClient, tofuClient126))
		row.setup = seed(r, testbed.Seeded{Status: status19(cond19("StateReadable", "Unknown", "StateNotFound")), World: in(testbed.World{})})
		row.clears = true
		row.note = "a state Secret exists though CAPTF's last pass found none: the plugin lists it, the Secret wins"
		row.says = []string{"CAPTF clears it with the object's next Job"}
		row.notAction = []string{"No Job clears it"}
		rows = append(rows, row)
	}

	// Review26b N2, and review26c R1: the base Secret deleted and a chunk
	// left while CAPTF last recorded StateReadable True. CAPTF's next
	// read orders the chunks, finds chunk 0 missing (StateInconsistent)
	// and holds the state: no Job starts, so none clears the lock (row 1c
	// is the same shape with a restore asked for, and replays its init).
	rows = append(rows, heldByNames26("issue26/1h live, base deleted and a chunk left: CAPTF's next read holds the state", "cf26-1h",
		"chunk 0 missing", "a chunk without its base",
		func(t *testing.T, ctx context.Context, ns string, r object.Ref) {
			if err := admin.StateChunk(ctx, r, "cl-"+r.Suffix(), 1); err != nil {
				t.Fatal(err)
			}
			if err := admin.Kube.CoreV1().Secrets(ns).Delete(ctx, object.StateSecretName("default", r.Suffix()), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		func(r object.Ref) string {
			return "its -part-N chunks have no base Secret tfstate-default-" + r.Suffix()
		}))

	// Review26c R1: a Secret of the state selector under a name that is
	// neither the base nor a -part-N chunk (a copy an operator made). Both
	// runtimes would read the base, but CAPTF's reader refuses the set
	// (unexpected name) and holds the state, so no Job starts.
	rows = append(rows, heldByNames26("issue26/1j a state Secret of another name: CAPTF's next read holds the state", "cf26-1j",
		"unexpected state Secret name", "a copy of the base Secret with the backend's labels",
		func(t *testing.T, ctx context.Context, ns string, r object.Ref) {
			base, err := admin.Kube.CoreV1().Secrets(ns).Get(ctx, object.StateSecretName("default", r.Suffix()), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: base.Name + "-copy", Namespace: ns, Labels: base.Labels}, Data: base.Data}
			if _, err := admin.Kube.CoreV1().Secrets(ns).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		func(r object.Ref) string {
			return "state Secret tfstate-default-" + r.Suffix() + "-copy is neither tfstate-default-" + r.Suffix() + " nor one of its -part-N chunks"
		}))

	// Review26d m4: CAPTF's readState checks its state Secrets for an
	// earlier object's captf.io/retained-from-uid before anything its read
	// finds (checkRetained): RetainedStateFound, no Job, not even a
	// restore, unless spec.adoptRetainedState.
	{
		row, r := stale19("issue26/1k a state Secret an earlier object retained", "cf26-1k", tc,
			cf26(cfRetain+" checkRetained", cfReconcile+" readState (checkRetained before the read's error)", cfLabels+" RetainedFromUIDLabel"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: &testbed.World{}})
			ctx := context.Background()
			base, err := admin.Kube.CoreV1().Secrets(ns).Get(ctx, object.StateSecretName("default", r.Suffix()), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			base.Labels["captf.io/retained-from-uid"] = "0e0e0e0e-0000-4000-8000-00000000e41e"
			if _, err := admin.Kube.CoreV1().Secrets(ns).Update(ctx, base, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"CAPTF will not clear it", "a state Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41e, an earlier object's", "StateReadable False/RetainedStateFound", "no Job starts, not even a restore"}
		row.action = []string{"Nothing: a state Secret carries captf.io/retained-from-uid="}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26f m3: a deletion's checkRetained reads the inputs Secrets,
	// and with no state Secret the backups too (objectSecrets); a label of
	// an earlier object's there releases the object without a Job and
	// without touching the Lease.
	retainLabel26 := func(t *testing.T, ns, name string) {
		t.Helper()
		patch := []byte(`{"metadata":{"labels":{"captf.io/retained-from-uid":"0e0e0e0e-0000-4000-8000-00000000e41f"}}}`)
		if _, err := admin.Kube.CoreV1().Secrets(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	{
		row, r := stale19("issue26/1l a deletion without state finds a backup an earlier object retained", "cf26-1l", tc,
			cf26(cfRetain+" checkRetained, objectSecrets, heldOnRetained", cfReconcileNew+" run (policyUnresolved, then readState)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Status: status19(cond19("StateReadable", "Unknown", "StateNotFound")), Delete: []string{}, World: in(testbed.World{NoState: true})})
			backup26(t, *r)
			retainLabel26(t, ns, "captf-state-backup-"+r.Suffix()+"-3")
		}
		row.says = []string{"CAPTF will not clear it", "a state backup Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41f, an earlier object's", "it releases the object without a Job and without touching the Lease"}
		row.action = []string{"Nothing: a state backup Secret carries", "Once the object is gone no controller reads this lock: clear it by hand."}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue26/1m a deletion finds its durable inputs Secret retained by an earlier object", "cf26-1m", tc,
			cf26(cfRetain+" checkRetained (the durable and applied Secrets setup read)", cfReconcileNew+" run (policyUnresolved, then readState)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Status: status19(cond19("StateReadable", "True", "StateRead")), Delete: []string{}, World: in(testbed.World{})})
			durable, _ := jobgate.InputsSecrets(r.Kind.Code, r.Name)
			retainLabel26(t, ns, durable)
		}
		row.says = []string{"CAPTF will not clear it", "the durable inputs Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41f"}
		row.action = []string{"Nothing: the durable inputs Secret carries"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26g F3: checkRetained runs on every pass, live or deleting
	// (readState calls it before it maps the read's error), and reads the
	// inputs Secrets setup read: an earlier object's label on the durable
	// inputs Secret of a live object holds it, and no Job starts.
	{
		row, r := stale19("issue26/1p a live object finds its durable inputs Secret retained by an earlier object", "cf26-1p", tc,
			cf26(cfRetain+" checkRetained, heldOnRetained (live or deleting)", cfReconcileNew+" readState (checkRetained before the read's error)", cfDurable+" Read"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: &testbed.World{}})
			durable, _ := jobgate.InputsSecrets(r.Kind.Code, r.Name)
			retainLabel26(t, ns, durable)
		}
		row.says = []string{"CAPTF will not clear it", "the durable inputs Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41f, an earlier object's", "no Job starts, not even a restore"}
		row.action = []string{"Nothing: the durable inputs Secret carries"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26g F2: CAPTF's setup reads the inputs records once either
	// exists (inputs.Read), and checkRetained checks both: the applied
	// Secret alone, beside a state CAPTF reads, releases the object.
	{
		row, r := stale19("issue26/1n a deletion finds its applied inputs Secret, alone, retained by an earlier object", "cf26-1n", tc,
			cf26(cfRetain+" checkRetained (r.durable's Secret and AppliedSecret)", "internal/inputs/durable.go@bfe694cf5a21042ffe2b04fd201cdb6e3cf88245 Read (either Secret)"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Status: status19(cond19("StateReadable", "True", "StateRead")), Delete: []string{}, World: in(testbed.World{NoRecords: true})})
			_, applied := jobgate.InputsSecrets(r.Kind.Code, r.Name)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: applied, Namespace: ns, Labels: map[string]string{"captf.io/retained-from-uid": "0e0e0e0e-0000-4000-8000-00000000e41f"}}}
			if _, err := admin.Kube.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"CAPTF will not clear it", "the applied inputs Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41f"}
		row.action = []string{"Nothing: the applied inputs Secret carries"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	// Review26g F1: a read that fails on the state Secrets' names lists
	// every Secret too, the backups among them.
	{
		row, r := stale19("issue26/1o a deletion whose state CAPTF cannot read finds a backup an earlier object retained", "cf26-1o", tc,
			cf26(cfRetain+" checkRetained (listed false on any read error), objectSecrets", cfReconcileNew+" readState"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Retain"}, Status: status19(cond19("StateReadable", "True", "StateRead")), Delete: []string{}, World: in(testbed.World{})})
			backup26(t, *r)
			retainLabel26(t, ns, "captf-state-backup-"+r.Suffix()+"-3")
			// A chunk without its base's neighbour: CAPTF's reader refuses the names.
			base, err := admin.Kube.CoreV1().Secrets(ns).Get(context.Background(), object.StateSecretName("default", r.Suffix()), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: base.Name + "-part-2", Namespace: ns, Labels: base.Labels}, Data: base.Data}
			if _, err := admin.Kube.CoreV1().Secrets(ns).Create(context.Background(), cp, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		row.says = []string{"CAPTF will not clear it", "a state backup Secret carries captf.io/retained-from-uid=0e0e0e0e-0000-4000-8000-00000000e41f", "it releases the object without a Job and without touching the Lease"}
		row.action = []string{"Nothing: a state backup Secret carries"}
		// row.deletes "": the rows check that captfDeletesLease is null.
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26b N1: a state the real terraform chunked (LargeStateResources:
	// the base and -part-N Secrets). terraform's init reads it and its
	// force-unlock clears the lock; OpenTofu's Get reads the base alone
	// and its init fails. Nothing read names the image's runtime.
	{
		row, r := stale19("issue26/1i chunked state: terraform's init clears, OpenTofu's fails", "cf26-1i", tc,
			cf26(cfReaderGo+" (orderChunks)", cfRunGo+" ChooseImage", cfPlan+" Steps", tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			w := testbed.World{NoState: true}
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: &w})
			ctx := context.Background()
			dir, err := tf.Init(ctx, testbed.Backend{Namespace: ns, Suffix: r.Suffix(), Labels: testbed.BackendLabels(*r, w.ClusterOf(*r)), Resources: testbed.LargeStateResources})
			if err != nil {
				t.Fatal(err)
			}
			if out, err := tf.Run(ctx, dir, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
				t.Fatalf("terraform apply of a large state: %v\n%s", err, out)
			}
		}
		// OpenTofu v1.12.6 says "Error loading state" and "unexpected EOF":
		// the base holds a truncated gzip stream.
		row.note = "terraform split the state into the base and -part-N Secrets; the runtime in the image decides"
		row.says = []string{"whether a Job clears it depends on the runtime", "its state has -part-N Secrets (tfstate-default-" + r.Suffix() + "-part-1", "with a Terraform image, init reads the base Secret and its chunks", "with an OpenTofu image, init reads the base Secret alone"}
		row.action = []string{"Whether a Job clears it depends on the runtime in the image", "Unlock it unless you know the image holds Terraform."}
		row.replay = &cfReplay{step: "init", output: []string{"unexpected EOF"}, clearedBy: "terraform"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26g F8: -part-N Secrets left over from a larger state (a
	// shrink whose delete failed) beside a base that holds the whole
	// state: CAPTF's reader reads the first gzip stream, terraform reads
	// past what follows it, OpenTofu reads the base alone: both clear.
	// The metadata cannot tell this from a split state (1i): the plugin
	// says the image decides.
	{
		row, r := stale19("issue26/1q chunks left over beside a whole base: both runtimes clear", "cf26-1q", tc,
			cf26(cfReaderGo+" (orderChunks; parse reads the first gzip stream)", cfPlan+" Steps", tfClient, tofuClient126))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("StateReadable", "True", "StateRead")), World: in(testbed.World{})})
			base, err := admin.Kube.CoreV1().Secrets(ns).Get(context.Background(), object.StateSecretName("default", r.Suffix()), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"1", "2"} {
				// The tail of an older, larger state's gzip stream.
				part := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: base.Name + "-part-" + n, Namespace: ns, Labels: base.Labels}, Data: map[string][]byte{"tfstate": []byte("left over from a larger state " + n)}}
				if _, err := admin.Kube.CoreV1().Secrets(ns).Create(context.Background(), part, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		row.note = "the base holds the whole state; both runtimes' init reads it, whatever follows"
		row.says = []string{"whether a Job clears it depends on the runtime", "-part-1, tfstate-default-" + r.Suffix() + "-part-2)", "a whole base with chunks left over from a larger state alike"}
		row.replay = &cfReplay{clearedBy: "terraform tofu"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Case 3: a Job that never reaches its steps.
	{
		row, r := stale19("issue26/3 the runner image cannot be pulled", "cf26-3", tc, cf26(cfConditions+" ImagePullFailedReason, ImageInvalidReason", cfRunGo+" ImageCandidates, ChooseImage", cfPlan+" Steps"))
		row.setup = seed(r, testbed.Seeded{Status: status19(cond19("ApplyJobSucceeded", "False", "ImagePullFailed")), World: in(testbed.World{})})
		row.says = []string{"no Job of CAPTF's clears it until the image runs", "ApplyJobSucceeded False/ImagePullFailed"}
		row.action = []string{"No Job clears it until the image runs"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26g F11: ApplyJobSucceeded names the Job whose image failed.
	// An apply's runs spec.source.image; the destroy runs the image CAPTF
	// pinned first, so it may reach its steps: unsure, not "until the
	// image runs". A destroy's own failure stops the next destroy.
	for _, c := range []struct {
		row, ns, op string
		says        string
	}{
		{"issue26/3g an apply's image failed, the object is deleted: the destroy runs the pinned image", "cf26-3g", "apply", "the destroy Job runs the image CAPTF pinned for the object first"},
		{"issue26/3h the destroy's own image failed: the next destroy stops on it", "cf26-3h", "destroy", "no Job of CAPTF's clears it until the image runs"},
	} {
		row, r := stale19(c.row, c.ns, tc, cf26(cfRunGo+" ImageCandidates, ChooseImage (spec.source.image for apply and plan, the pinned digest first for the others)", "internal/controllers/shared/pullfallback.go@3c7bece452eae4847057ed970df575366e64588b pullStuck, pullFailed", cfBookkeeping+" namesJob"))
		job := cfJobName(tc.Code, "web", c.op, 2, "abcdef")
		row.setup = seed(r, testbed.Seeded{Spec: map[string]any{"deletionPolicy": "Destroy"}, Delete: []string{},
			Status: status19(testbed.Condition("ApplyJobSucceeded", "False", "ImagePullFailed", "Job "+job+": the runner image could not be pulled", time.Now())), World: in(testbed.World{})})
		row.says = []string{"ApplyJobSucceeded False/ImagePullFailed", c.says}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26c R2: the drift and refresh Jobs', or the restore's, image
	// cannot be pulled and no other is left (pullStuck, pullFailed): CAPTF
	// writes it on DriftJobSucceeded or RestoreJobSucceeded, and each
	// stops the Jobs it names.
	{
		row, r := stale19("issue26/3b the drift Jobs' image cannot be pulled", "cf26-3b", tc,
			cf26(cfPullFallback+" pullStuck, pullFailed (DriftJobSucceeded)", cfRunGo+" ChooseImage", cfPlan+" Steps"))
		row.setup = seed(r, testbed.Seeded{Status: status19(cond19("DriftJobSucceeded", "False", "ImagePullFailed")), World: in(testbed.World{})})
		row.says = []string{"no Job of CAPTF's clears it until the image runs", "the module image of its drift and refresh Jobs could not be pulled", "DriftJobSucceeded False/ImagePullFailed", "until that image can be pulled or CAPTF has another to try"}
		row.action = []string{"No Job clears it until the image runs"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	{
		row, r := stale19("issue26/3c the restore's image cannot be pulled", "cf26-3c", tc,
			cf26(cfPullFallback+" pullStuck, pullFailed (RestoreJobSucceeded)", cfRestore+" restoreTarget", cfPlan+" Steps"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Annotations: map[string]string{"captf.io/restore-state": "3"},
				Status: status19(cond19("StateReadable", "True", "StateRead"), cond19("RestoreJobSucceeded", "False", "ImagePullFailed")), World: in(testbed.World{})})
			backup26(t, *r)
		}
		row.says = []string{"no Job of CAPTF's clears it until the image runs", "the module image of its restore Job could not be pulled", "RestoreJobSucceeded False/ImagePullFailed"}
		row.action = []string{"No Job clears it until the image runs"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}

	// Review26d M1: the drift Job stuck on its image while it runs
	// (pullStuck wrote DriftJobSucceeded ImagePullFailed), and once its
	// deadline ended it, when bookkeeping rewrote the condition from the
	// finished Job (DriftJobDeadlineExceeded) and nothing says
	// ImagePullFailed any more: the finished Job, started after the
	// holder's with the lock still held, is the evidence.
	{
		row, r := stale19("issue26/3d the drift Job stuck on its image, still active", "cf26-3d", tc,
			cf26(cfPullFallback+" pullStuck, pullFailed (DriftJobSucceeded)", cfBookkeeping148+" Bookkeep (no lock check while a Job runs)", cfPlan+" Steps"))
		const drift = "captf-c-web-drift-a2-cccccc"
		forced3d := "--force-unlock=" + cfLockID
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DriftJobSucceeded", "False", "ImagePullFailed")), World: in(testbed.World{})})
			jobs26(t, *r, job26{drift, "drift", testbed.JobRunning, []string{"--op=drift", forced3d}})
		}
		row.active = drift
		row.says = []string{"no Job of CAPTF's clears it until the image runs", "DriftJobSucceeded False/ImagePullFailed"}
		row.action = []string{"Job " + drift + " is active, so the controller checks the lock only after it finishes.", "No Job clears it until the image runs"}
		row.check = unlockAdvised(*r)
		rows = append(rows, row)
	}
	holderJob := cfJobName(tc.Code, "web", "apply", 1, "d72d2a")
	forced := "--force-unlock=" + cfLockID
	{
		row, r := stale19("issue26/3e the drift Job stuck on its image, ended at its deadline", "cf26-3e", tc,
			cf26(cfBookkeeping148+" Bookkeep, checkLock, setDriftJob", cfSpec+" args (--force-unlock)", cfPlan+" Steps"))
		const drift = "captf-c-web-drift-a2-cccccc"
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{Status: status19(cond19("DriftJobSucceeded", "False", "DriftJobDeadlineExceeded")), World: in(testbed.World{})})
			jobs26(t, *r, job26{holderJob, "apply", testbed.JobFailed, nil}, job26{drift, "drift", testbed.JobDeadlineExceeded, []string{"--op=drift", "--image=registry.example/web:1", forced}})
		}
		row.says = []string{"CAPTF's Jobs have not cleared it", "its drift Job " + drift + ", running registry.example/web:1, which CAPTF created to force-unlock it (--force-unlock=" + cfLockID + "), failed (DeadlineExceeded) and the lock is still held", "whether CAPTF's next Job clears it depends on what stopped that one"}
		row.action = []string{"No Job has cleared it: its drift Job " + drift, "Unlock it once you know what stopped that Job."}
		row.check = func(t *testing.T, kc string, l v1alpha1.Lock) {
			unlockAdvised(*r)(t, kc, l)
			x := explainJSONIn(t, r.Namespace, r.String())
			if len(x.Advice) == 0 || len(x.Advice[0].Argv) < 5 || x.Advice[0].Argv[0] != "kubectl" ||
				!slices.Equal(x.Advice[0].Argv[len(x.Advice[0].Argv)-5:], []string{"describe", "job", "-n", r.Namespace, drift}) || !slices.Contains(x.Advice[0].Argv, "--kubeconfig") {
				t.Errorf("explain's first advice is not kubectl describe job %s: %+v", drift, x.Advice)
			}
		}
		rows = append(rows, row)
	}
	{
		// review26e M1: a Job CAPTF created while the holder's pod still
		// ran carries no force-unlock, and one of another lock's ID is
		// about another lock: neither says anything of this one.
		row, r := stale19("issue26/3f a Job without this lock's force-unlock is no evidence", "cf26-3f", tc,
			cf26(cfBookkeeping148+" checkLock", cfSpec+" args (--force-unlock)", cfPlan+" Steps"))
		row.setup = func(t *testing.T, ns string) {
			seed19(t, *r, testbed.Seeded{World: in(testbed.World{})})
			jobs26(t, *r, job26{holderJob, "apply", testbed.JobFailed, nil},
				job26{"captf-c-web-drift-a2-cccccc", "drift", testbed.JobDeadlineExceeded, []string{"--op=drift"}},
				job26{"captf-c-web-drift-a3-dddddd", "drift", testbed.JobFailed, []string{"--op=drift", "--force-unlock=00000000-0000-4000-8000-000000000000"}})
		}
		row.clears = true
		row.says = []string{"CAPTF clears it with the object's next Job"}
		rows = append(rows, row)
	}

	// Case 4: a Live lock: no Job while the pod runs.
	{
		row, r := stale19("issue26/4 live: the run lease holds the next Job back", "cf26-4", tc, cf26(cfRunLease+" Free, podsRunning", cfRunGo+" StartJob"))
		row.setup = seed(r, testbed.Seeded{World: in(testbed.World{})})
		row.want, row.absent = v1alpha1.Live, nil
		row.pods = []cfPod{{name: row.host, phase: corev1.PodRunning}}
		row.says = []string{"CAPTF starts no Job of terraformcluster/web while it runs", "its run lease captf-run-" + r.Suffix(), "WaitingForRunLease", "the next Job CAPTF starts force-unlocks it"}
		row.action = []string{"CAPTF creates no Job of terraformcluster/web until its run lease captf-run-" + r.Suffix() + " is free"}
		row.notAction = []string{"A next Job would wait"}
		rows = append(rows, row)
	}

	// Case 5: waits before the Job delay the clear.
	{
		row, r := stale19("issue26/5 the clear waits for a Job slot and the cluster", "cf26-5", tc, cf26(cfSlots+" takeJobSlot", cfRunLease+" Free", cfConditions+" WaitingForRunLeaseReason, WaitingForClusterOperationReason"))
		row.setup = seed(r, testbed.Seeded{Status: status19(cond19("DriftJobSucceeded", "Unknown", "WaitingForJobSlot"), cond19("ApplyJobSucceeded", "Unknown", "WaitingForMachineOperations")), World: in(testbed.World{})})
		row.clears = true
		row.says = []string{"CAPTF clears it with the object's next Job", "waits first for", "WaitingForJobSlot", "WaitingForMachineOperations", "delays the clear and does not stop it"}
		row.action = []string{"which delays the clear and does not stop it"}
		rows = append(rows, row)
	}
	return rows
}

// job26 is a runner Job of a row's object: its name, op, outcome and
// runner args.
type job26 struct {
	name, op string
	outcome  testbed.JobOutcome
	args     []string
}

// jobs26 creates r's own Jobs in order, each at least a second after the
// one before, as the API server's creationTimestamps count in seconds
// (the finished Jobs' order).
func jobs26(t *testing.T, r object.Ref, jobs ...job26) {
	t.Helper()
	ctx := context.Background()
	uid, err := admin.UID(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for n, j := range jobs {
		if n > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		if err := admin.Job(ctx, r, j.name, j.op, uid, j.outcome, j.args...); err != nil {
			t.Fatal(err)
		}
	}
}
