package jobgate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CAPTF's state reader: any Secret with the three backend labels is
// state, chunks without a base included; a Secret named as the state
// without them is none (state.Selector, reader.go Read).
func TestStateOf(t *testing.T) {
	const sfx = "0123456789abcdef-c"
	labels := func(kv ...string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: "tfstate-default-" + sfx, Labels: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			m.Labels[kv[i]] = kv[i+1]
		}
		return m
	}
	full := []string{StateLabel, "true", StateSuffixLabel, sfx, StateWorkspaceLabel, "default"}
	chunk := labels(full...)
	chunk.Name += "-part-1"
	for _, c := range []struct {
		name    string
		secrets []metav1.ObjectMeta
		want    Presence
	}{
		{"none", nil, Absent},
		{"the base", []metav1.ObjectMeta{labels(full...)}, Present},
		{"a chunk alone: inconsistent, but state", []metav1.ObjectMeta{chunk}, Present},
		{"the base name without tfstate=true", []metav1.ObjectMeta{labels(StateSuffixLabel, sfx, StateWorkspaceLabel, "default")}, Absent},
		{"another workspace", []metav1.ObjectMeta{labels(StateLabel, "true", StateSuffixLabel, sfx, StateWorkspaceLabel, "blue")}, Absent},
		{"another suffix", []metav1.ObjectMeta{labels(StateLabel, "true", StateSuffixLabel, "x", StateWorkspaceLabel, "default")}, Absent},
	} {
		if got := StateOf(c.secrets, sfx); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if got := StateSelector(sfx); got != "tfstate=true,tfstateSecretSuffix="+sfx+",tfstateWorkspace=default" {
		t.Errorf("selector %q", got)
	}
	if got := BackupSelector(sfx); got != "captf.io/state-backup=true,captf.io/state-backup-suffix="+sfx {
		t.Errorf("backup selector %q", got)
	}
}

// CAPTF's reader orders the state Secrets by name before it reads them
// (reader.go orderChunks): the base is chunk 0, -part-N chunk N; another
// name, a gap, a chunk without its base or more than 32 Secrets is a
// state it holds.
func TestChunkSet(t *testing.T) {
	const sfx = "0123456789abcdef-c"
	base := "tfstate-default-" + sfx
	names := func(ns ...string) []metav1.ObjectMeta {
		out := make([]metav1.ObjectMeta, len(ns))
		for n, name := range ns {
			out[n] = metav1.ObjectMeta{Name: name}
		}
		return out
	}
	many := []string{base}
	for n := 1; n <= 32; n++ {
		many = append(many, base+"-part-"+strconv.Itoa(n))
	}
	for _, c := range []struct {
		name    string
		secrets []string
		reason  string
		says    string
	}{
		{"none", nil, "", ""},
		{"the base", []string{base}, "", ""},
		{"the base and two chunks, in any order", []string{base + "-part-2", base, base + "-part-1"}, "", ""},
		{"32 Secrets", many[:32], "", ""},
		{"33 Secrets", many, "StateCorrupt", "33 state Secrets, more than the 32"},
		{"a chunk without its base", []string{base + "-part-1"}, "StateInconsistent", "have no base Secret " + base},
		{"a gap", []string{base, base + "-part-2"}, "StateInconsistent", "chunk " + base + "-part-1 is missing among its 2"},
		{"a copy under another name", []string{base, base + "-copy"}, "StateInconsistent", "state Secret " + base + "-copy is neither " + base},
		{"a leading zero", []string{base, base + "-part-01"}, "StateInconsistent", base + "-part-01 is not a chunk CAPTF numbers"},
		{"part 0", []string{base, base + "-part-0"}, "StateInconsistent", base + "-part-0 is not a chunk"},
		{"a sign", []string{base, base + "-part-+1"}, "StateInconsistent", base + "-part-+1 is not a chunk"},
		// review26d m3: one Secret read twice is one chunk.
		{"the base listed twice", []string{base, base + "-part-1", base}, "", ""},
	} {
		labelled := names(c.secrets...)
		for n := range labelled {
			labelled[n].Labels = map[string]string{StateLabel: "true", StateSuffixLabel: sfx, StateWorkspaceLabel: "default"}
		}
		reason, why := ChunkSet(StateSecrets(labelled, sfx), sfx)
		if reason != c.reason || !strings.Contains(why, c.says) || (c.says == "") != (why == "") {
			t.Errorf("%s: %q, %q; want %q saying %q", c.name, reason, why, c.reason, c.says)
		}
	}
}

// The inputs records' names (inputs.Name, inputs.AppliedName,
// strutil.BoundedName) and what their metadata says.
func TestRecords(t *testing.T) {
	d, a := InputsSecrets("mp", "web")
	if d != "captf-inputs-mp-web" || a != "captf-applied-mp-web" {
		t.Errorf("%s %s", d, a)
	}
	long := strings.Repeat("n", 250)
	d, a = InputsSecrets("m", long)
	if len(d) != 253 || len(a) != 253 || !strings.HasPrefix(d, "captf-inputs-m-nnn") || d[236:] != "-"+sha16(long) || a[236:] != d[236:] {
		t.Errorf("bounded: %s (%d) %s (%d)", d, len(d), a, len(a))
	}
	if r := RecordsOf(nil, nil, nil); !r.Read || r.Inputs || r.Applied || r.Backups || r.Interrupted != "" {
		t.Errorf("none: %+v", r)
	}
	durable := &metav1.ObjectMeta{Annotations: map[string]string{AppliedAnnotation: "true", InterruptedApplyAnnotation: "captf-c-web-apply-a2-aaaaaa"}}
	if r := RecordsOf(durable, nil, []metav1.ObjectMeta{{}}); !r.Inputs || !r.Applied || !r.Backups || r.Interrupted != "captf-c-web-apply-a2-aaaaaa" {
		t.Errorf("durable: %+v", r)
	}
	if r := RecordsOf(&metav1.ObjectMeta{}, nil, nil); !r.Inputs || r.Applied {
		t.Errorf("an attempt only: %+v", r)
	}
	if r := RecordsOf(nil, &metav1.ObjectMeta{}, nil); !r.Inputs || !r.Applied {
		t.Errorf("an applied record: %+v", r)
	}
}

// The preamble's release of an ownerless deletion comes before the
// pause and the lock check; when it depends on what could not be read,
// the gate says so, and that CAPTF may stop before the lock check.
func TestOwnerlessRelease(t *testing.T) {
	u := obj(deleting, noOwner)
	g := Of("TerraformMachine", u, env(withState(Absent), withRecords(noRecords)))
	if !g.BeforeLockCheck || !g.Quiet || !g.Releases || g.Deletes != nil || g.MaybeBeforeLockCheck {
		t.Errorf("released: %+v", g)
	}
	g = Of("TerraformMachine", u, env(withState(Absent), withRecords(Records{})))
	// Released or held on an unresolved policy: no Job either way.
	if g.BeforeLockCheck || g.Quiet || !g.MaybeBeforeLockCheck || g.State != Closed || !g.Releases {
		t.Errorf("maybe released: %+v", g)
	}
	// With its state unread, a destroy may start instead of the release.
	g = Of("TerraformCluster", objOf("TerraformCluster", deleting, noOwner), env(withState(Unread), withRecords(noRecords)))
	if g.State != Unsure || !g.MaybeBeforeLockCheck || g.Releases {
		t.Errorf("maybe released, else destroyed: %+v", g)
	}
	// An owner reference: no release, whatever is unread.
	if g := Of("TerraformMachine", obj(deleting, set("Retain", "spec", "deletionPolicy")), env(withState(Absent), withRecords(Records{}))); g.MaybeBeforeLockCheck || g.Releases {
		t.Errorf("owned: %+v", g)
	}
	// The zero Env reads nothing: never "clears".
	for _, u := range []*unstructured.Unstructured{obj(), obj(deleting), obj(deleting, noOwner), objOf("TerraformCluster", deleting)} {
		if g := Of(u.GetKind(), u, Env{}); g.State == Open {
			t.Errorf("%s (deleting %v) with nothing read: %+v", u.GetKind(), u.GetDeletionTimestamp() != nil, g)
		}
	}
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

// RecordsIn picks the object's own records out of its namespace's Secrets:
// its inputs Secrets by name, its backups by label; another object's are
// not its.
func TestRecordsIn(t *testing.T) {
	durable, applied := InputsSecrets("m", "web")
	otherDurable, _ := InputsSecrets("m", "db")
	secrets := []metav1.ObjectMeta{
		{Name: durable, Annotations: map[string]string{InterruptedApplyAnnotation: "captf-m-web-apply-a2-abcdef"}},
		{Name: otherDurable, Annotations: map[string]string{AppliedAnnotation: "true"}},
		{Name: "b1", Labels: map[string]string{BackupLabel: "true", BackupSuffixLabel: "other-m"}},
	}
	if got, want := RecordsIn(secrets, "m", "web", "web-m"), (Records{Read: true, Inputs: true, Interrupted: "captf-m-web-apply-a2-abcdef", Retained: RetainedMarks{DurableExists: true}}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	secrets = append(secrets, metav1.ObjectMeta{Name: applied}, metav1.ObjectMeta{Name: "b2", Labels: map[string]string{BackupLabel: "true", BackupSuffixLabel: "web-m"}})
	if got, want := RecordsIn(secrets, "m", "web", "web-m"), (Records{Read: true, Inputs: true, Applied: true, Interrupted: "captf-m-web-apply-a2-abcdef", Backups: true, Retained: RetainedMarks{DurableExists: true, AppliedExists: true}}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	if got := RecordsIn(nil, "m", "web", "web-m"); got != (Records{Read: true}) {
		t.Errorf("no Secrets: %+v", got)
	}
}

// RetainedFrom follows checkRetained's reads (retain.go at
// 665f88bbb7e5f92cc5a32fd15406517769c0e98a): the inputs Secrets when the
// durable one exists, the state Secrets, and, with no state, the backups
// and every inputs Secret; the object's own uid is not another's.
func TestRetainedFrom(t *testing.T) {
	const uid, other = "uid-now", "uid-before"
	label := func(v string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Labels: map[string]string{RetainedLabel: v}}
	}
	durable, applied := InputsSecrets("m", "web")
	named := func(name, v string) metav1.ObjectMeta { m := label(v); m.Name = name; return m }
	backup := func(v string) metav1.ObjectMeta {
		m := label(v)
		m.Labels[BackupLabel], m.Labels[BackupSuffixLabel] = "true", "web-m"
		return m
	}
	state := []metav1.ObjectMeta{label("")}
	for _, c := range []struct {
		name      string
		state     []metav1.ObjectMeta
		secrets   []metav1.ObjectMeta // the records' Secrets; nil: unread
		fails     bool                // CAPTF's read of the state fails
		from, why string
	}{
		{"a state Secret of another", []metav1.ObjectMeta{label(""), label(other)}, nil, false, other, "a state Secret"},
		{"its own uid", []metav1.ObjectMeta{label(uid)}, []metav1.ObjectMeta{named(durable, uid), backup(uid)}, true, "", ""},
		{"the durable Secret, state or not", state, []metav1.ObjectMeta{named(durable, other)}, false, other, "the durable inputs Secret"},
		{"the applied Secret beside the durable one", state, []metav1.ObjectMeta{named(durable, ""), named(applied, other)}, false, other, "the applied inputs Secret"},
		// review26g F2: inputs.Read gives both once either exists.
		{"the applied Secret alone, with state", state, []metav1.ObjectMeta{named(applied, other)}, false, other, "the applied inputs Secret"},
		{"the applied Secret alone, no state", nil, []metav1.ObjectMeta{named(applied, other)}, true, other, "the applied inputs Secret"},
		{"a backup, with state CAPTF reads: not read", state, []metav1.ObjectMeta{backup(other)}, false, "", ""},
		// review26g F1: any failed read lists every Secret.
		{"a backup, with state CAPTF cannot read", state, []metav1.ObjectMeta{backup(other)}, true, other, "a state backup Secret"},
		{"a backup, no state", nil, []metav1.ObjectMeta{backup(uid), backup(other)}, true, other, "a state backup Secret"},
		{"records unread, no state", nil, nil, true, "", ""},
	} {
		rec := Records{}
		if c.secrets != nil {
			rec = RecordsIn(c.secrets, "m", "web", "web-m")
		}
		if from, why := RetainedFrom(c.state, rec, uid, c.fails); from != c.from || why != c.why {
			t.Errorf("%s: %q in %q, want %q in %q", c.name, from, why, c.from, c.why)
		}
	}
}

// ReadFails: no state, refused names, or a StateReadable that says the
// data could not be read.
func TestReadFails(t *testing.T) {
	some := []metav1.ObjectMeta{{Name: "tfstate-default-web-m"}}
	if !ReadFails(obj(), nil, "") || !ReadFails(obj(), some, "StateInconsistent") || !ReadFails(obj(cond("StateReadable", "False", "StateCorrupt")), some, "") {
		t.Error("a read that fails is not said to")
	}
	if ReadFails(obj(), some, "") || ReadFails(obj(cond("StateReadable", "False", "StateLost")), some, "") {
		t.Error("a read that succeeds is said to fail")
	}
}
