package jobgate

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// What CAPTF keeps for an object besides its state, as the caller reads
// it (metadata only: never a Secret's data), and the helpers that turn
// that metadata into what the rules need. The names, labels and
// annotations are CAPTF's (captf-io/cluster-api-provider-terraform:
// internal/inputs/durable.go at bfe694cf5a21042ffe2b04fd201cdb6e3cf88245
// Name, AppliedName, Read; internal/inputs/keys.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517; internal/strutil/name.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517 BoundedName;
// internal/state/labels.go at 16ca67d3711e1eb42cfbf3acd89c0d42f6970517
// Selector; internal/state/backup.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517 BackupSelector).

// Labels and annotations of CAPTF's Secrets.
const (
	// The backend's labels on every state Secret (chunks included).
	StateLabel          = "tfstate"
	StateSuffixLabel    = "tfstateSecretSuffix"
	StateWorkspaceLabel = "tfstateWorkspace"
	// ManagedLabel marks what CAPTF manages: the backend's state Secrets
	// and lock Leases (state.BackendLabels), its inputs records and
	// state backups.
	ManagedLabel = "captf.io/managed"
	// BackupLabel and BackupSuffixLabel mark an object's state backups.
	BackupLabel       = "captf.io/state-backup"
	BackupSuffixLabel = "captf.io/state-backup-suffix"
	// AppliedAnnotation ("true") on the durable inputs Secret marks a
	// successful apply or restore.
	AppliedAnnotation = "captf.io/applied"
	// InterruptedApplyAnnotation on the durable inputs Secret names an
	// apply Job whose outcome is unconfirmed.
	InterruptedApplyAnnotation = "captf.io/interrupted-apply"
	// BookkeptAnnotation ("true") marks a finished Job CAPTF's
	// bookkeeping has read (shared/bookkeeping.go).
	BookkeptAnnotation = "captf.io/bookkept"
)

// StateSelector is the label selector CAPTF's state reader lists an
// object's state Secrets with (state.Selector): every chunk of its
// workspace-default state. Any Secret it matches is state to CAPTF:
// only when none does is there "no state" (state.ErrNoState); chunks
// without the base Secret, a base without data, or an unexpected name
// are an inconsistent state, which CAPTF holds.
func StateSelector(suffix string) string {
	return StateLabel + "=true," + StateSuffixLabel + "=" + suffix + "," + StateWorkspaceLabel + "=default"
}

// BackupSelector is the label selector of an object's state backups
// (state.BackupSelector).
func BackupSelector(suffix string) string {
	return BackupLabel + "=true," + BackupSuffixLabel + "=" + suffix
}

// StateOf says whether CAPTF finds state for suffix among secrets, the
// metadata of Secrets listed in the object's namespace (by StateSelector
// or any wider selector): Present when one of them carries the three
// labels of StateSelector, Absent when none does.
func StateOf(secrets []metav1.ObjectMeta, suffix string) Presence {
	if len(StateSecrets(secrets, suffix)) > 0 {
		return Present
	}
	return Absent
}

// StateSecrets are those of secrets that CAPTF's state reader lists for
// suffix: the ones carrying the three labels of StateSelector.
func StateSecrets(secrets []metav1.ObjectMeta, suffix string) []metav1.ObjectMeta {
	var out []metav1.ObjectMeta
	seen := map[string]bool{}
	for _, s := range secrets {
		l := s.Labels
		// A Secret read twice (a state Secret that also carries the
		// backup labels, in a deletion's list of both) is one Secret:
		// names are unique in a namespace.
		if l[StateLabel] == "true" && l[StateSuffixLabel] == suffix && l[StateWorkspaceLabel] == "default" && !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out
}

// MaxStateChunks is the most state Secrets CAPTF's reader accepts
// (state.MaxChunks); beyond it the state is corrupt to CAPTF.
const MaxStateChunks = 32

// RetainedLabel is the label with which deletionPolicy Retain marks the
// Secrets it keeps, naming the uid of the object that retained them
// (internal/state/labels.go RetainedFromUIDLabel, at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517).
const RetainedLabel = "captf.io/retained-from-uid"

// RetainedFrom is the uid of another object than uid that one of the
// object's Secrets says retained it, and which Secret says so ("" for
// none), as CAPTF's checkRetained finds it (shared/retain.go at
// 665f88bbb7e5f92cc5a32fd15406517769c0e98a), which readState runs before
// it maps the read's own error (review26d m4): the durable and applied
// inputs Secrets, whichever exist (setup's inputs.Read gives both once
// either exists, internal/inputs/durable.go at
// bfe694cf5a21042ffe2b04fd201cdb6e3cf88245), then the state Secrets it
// listed, state; and, when its read of the state fails (readFails: no
// state Secret, or one it cannot read), every Secret objectSecrets
// lists, the state backups among them (reconcile.go readState at
// ade7dc79d93b624f3a23cffb2e55f6487a315ab7 passes listed only for a
// read without error; review26g F1, F2). A retained Secret gives
// RetainedStateFound whatever the state's names. rec is what was read of
// the object's other Secrets: only for an object being deleted; for
// another the plugin sees the state Secrets' labels only, and the
// others, which CAPTF checks too, say so in StateReadable at CAPTF's
// next pass.
func RetainedFrom(state []metav1.ObjectMeta, rec Records, uid string, readFails bool) (from, where string) {
	foreign := func(v string) bool { return v != "" && v != uid }
	m := rec.Retained
	if rec.Read && m.DurableExists && foreign(m.Durable) {
		return m.Durable, "the durable inputs Secret"
	}
	if rec.Read && m.AppliedExists && foreign(m.Applied) {
		return m.Applied, "the applied inputs Secret"
	}
	for _, s := range state {
		if v := s.Labels[RetainedLabel]; foreign(v) {
			return v, "a state Secret"
		}
	}
	if !readFails || !rec.Read {
		return "", ""
	}
	for _, v := range m.Backups {
		if foreign(v) {
			return v, "a state backup Secret"
		}
	}
	return "", ""
}

// ReadFails is whether CAPTF's next read of the state of u fails, as
// far as the plugin can tell: no state Secret (state empty), names its
// reader refuses (chunkReason, ChunkSet's), or a StateReadable that says
// it could not read the data (StateEncrypted, StateCorrupt,
// StateInconsistent), which CAPTF finds again at its next read.
func ReadFails(u *unstructured.Unstructured, state []metav1.ObjectMeta, chunkReason string) bool {
	c, ok := conditions(u)["StateReadable"]
	return len(state) == 0 || chunkReason != "" ||
		(ok && c.status == "False" && (c.reason == "StateEncrypted" || c.reason == "StateCorrupt" || c.reason == "StateInconsistent"))
}

// RetainedMarks are the RetainedLabel values on an object's Secrets
// other than its state: what CAPTF's checkRetained reads of them.
type RetainedMarks struct {
	// Durable and Applied are the values on the durable and the applied
	// inputs Secret ("" for none), when that Secret exists.
	Durable, Applied             string
	DurableExists, AppliedExists bool
	// Backups are the first two distinct values on its state backups:
	// with the object's own uid among them, the other is another's.
	Backups [2]string
}

// marks is RetainedMarks from the durable and applied inputs Secrets'
// metadata (nil when missing) and the state backups'.
func marks(durable, applied *metav1.ObjectMeta, backups []metav1.ObjectMeta) RetainedMarks {
	var m RetainedMarks
	if durable != nil {
		m.Durable, m.DurableExists = durable.Labels[RetainedLabel], true
	}
	if applied != nil {
		m.Applied, m.AppliedExists = applied.Labels[RetainedLabel], true
	}
	n := 0
	for _, b := range backups {
		if v := b.Labels[RetainedLabel]; v != "" && n < len(m.Backups) && (n == 0 || m.Backups[0] != v) {
			m.Backups[n] = v
			n++
		}
	}
	return m
}

// ChunkSet is what CAPTF's state reader makes of the names of secrets,
// an object's state Secrets (StateSecrets of suffix), before it reads
// any data (internal/state/reader.go at
// 16ca67d3711e1eb42cfbf3acd89c0d42f6970517 orderChunks): the base
// Secret tfstate-default-<suffix> is chunk 0 and <base>-part-N chunk N,
// N written as a number from 1 without leading zeros; another name, or
// chunk numbers that are not exactly 0 to n-1 (one missing or twice,
// the base among them), is StateInconsistent, and more than
// MaxStateChunks Secrets StateCorrupt. reason is "" where the names
// order (or there are none), else that StateReadable reason, and why
// says what CAPTF finds. What the names cannot show (a base without its
// tfstate key, a payload that does not decode) is known only from
// StateReadable, which CAPTF writes at its next pass.
func ChunkSet(secrets []metav1.ObjectMeta, suffix string) (reason, why string) {
	if len(secrets) == 0 {
		return "", ""
	}
	if len(secrets) > MaxStateChunks {
		return "StateCorrupt", fmt.Sprintf("%d state Secrets, more than the %d CAPTF's reader accepts", len(secrets), MaxStateChunks)
	}
	base := object.StateSecretName(object.DefaultWorkspace, suffix)
	index := make([]int, 0, len(secrets))
	for _, s := range secrets {
		if s.Name == base {
			index = append(index, 0)
			continue
		}
		n, ok := strings.CutPrefix(s.Name, base+"-part-")
		if !ok {
			return "StateInconsistent", fmt.Sprintf("state Secret %s is neither %s nor one of its -part-N chunks", s.Name, base)
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 || strconv.Itoa(v) != n {
			return "StateInconsistent", fmt.Sprintf("state Secret %s is not a chunk CAPTF numbers (-part-1, -part-2, …)", s.Name)
		}
		index = append(index, v)
	}
	slices.Sort(index)
	for n, v := range index {
		switch {
		case v == n:
		case n == 0:
			return "StateInconsistent", fmt.Sprintf("its -part-N chunks have no base Secret %s", base)
		default:
			return "StateInconsistent", fmt.Sprintf("chunk %s-part-%d is missing among its %d state Secrets", base, n, len(index))
		}
	}
	return "", ""
}

// InputsSecrets are the names of the durable and the applied inputs
// Secret of the object name of kind code ("c", "m", "mp"):
// captf-inputs-<code>-<name> and captf-applied-<code>-<name>, each
// bounded to 253 characters as CAPTF bounds it.
func InputsSecrets(code, name string) (durable, applied string) {
	return boundedName("captf-inputs-", code, name), boundedName("captf-applied-", code, name)
}

// boundedName is strutil.BoundedName: prefix+code+"-"+name, or, beyond
// 253 characters, its start, trimmed of trailing "-" and ".", and "-"
// plus the first 16 hex digits of sha256(name).
func boundedName(prefix, code, name string) string {
	full := prefix + code + "-" + name
	if len(full) <= 253 {
		return full
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:])[:16]
	return strings.TrimRight(full[:253-len(suffix)], "-.") + suffix
}

// Records is what an object's inputs records and state backups show:
// what CAPTF renders a destroy from, and its signs that the object
// applied before (deletion.go appliedBefore, everApplied).
type Records struct {
	// Read is false when they could not be read; Why then says why. The
	// zero value is unread.
	Read bool
	Why  string
	// Inputs is true when the durable or the applied inputs Secret
	// exists: a record a destroy, or a provisioned TerraformMachine's
	// refresh and drift Jobs, render (reconcile.go runRecord).
	Inputs bool
	// Applied is true when the applied Secret exists or the durable one
	// carries AppliedAnnotation "true": the object applied before.
	Applied bool
	// Interrupted names the apply Job the durable Secret records as
	// unconfirmed (InterruptedApplyAnnotation); "" for none.
	Interrupted string
	// Backups is true when a state backup Secret of the object exists.
	Backups bool
	// Retained is what those Secrets say of an earlier object that
	// retained them (RetainedFrom).
	Retained RetainedMarks
}

// RecordsOf is Records from what was read: the metadata of the durable
// and the applied inputs Secret (nil when that Secret does not exist)
// and of the Secrets BackupSelector lists.
func RecordsOf(durable, applied *metav1.ObjectMeta, backups []metav1.ObjectMeta) Records {
	r := Records{Read: true, Inputs: durable != nil || applied != nil, Applied: applied != nil, Backups: len(backups) > 0, Retained: marks(durable, applied, backups)}
	if durable != nil {
		r.Applied = r.Applied || durable.Annotations[AppliedAnnotation] == "true"
		r.Interrupted = durable.Annotations[InterruptedApplyAnnotation]
	}
	return r
}

// RecordsIn is RecordsOf from the metadata of Secrets of the object's
// namespace, as one list of them gives it: the object's inputs Secrets
// by name (InputsSecrets of its kind's code and name), its backups by
// BackupSelector's labels for its state suffix.
func RecordsIn(secrets []metav1.ObjectMeta, code, name, suffix string) Records {
	durableName, appliedName := InputsSecrets(code, name)
	var durable, applied *metav1.ObjectMeta
	var backups []metav1.ObjectMeta
	for n := range secrets {
		m := &secrets[n]
		switch {
		case m.Name == durableName:
			durable = m
		case m.Name == appliedName:
			applied = m
		case m.Labels[BackupLabel] == "true" && m.Labels[BackupSuffixLabel] == suffix:
			backups = append(backups, *m)
		}
	}
	return RecordsOf(durable, applied, backups)
}

// appliedBefore is CAPTF's appliedBefore as far as the plugin can tell:
// whether the object applied before, why, and whether that is known.
func appliedBefore(provisioned bool, r Records) (applied bool, why string, known bool) {
	switch {
	case provisioned:
		return true, "it is provisioned", true
	case !r.Read:
		return false, "", false
	case r.Applied:
		return true, "its inputs records mark an apply", true
	case r.Backups:
		return true, "state backups of it exist", true
	}
	return false, "", true
}
