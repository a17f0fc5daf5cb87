// Package inspect reads Terraform/OpenTofu lock Leases and classifies each
// as CAPTF's controller would: Unlocked, Live, Stale, Foreign or Unknown.
// It holds no command-line or printing code; every command takes its
// verdicts from here.
package inspect

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// Labels and annotations the kubernetes backend writes on its Leases.
const (
	LabelWorkspace    = "tfstateWorkspace"
	LabelSecretSuffix = "tfstateSecretSuffix"
	AnnotationLock    = "app.terraform.io/lock-info"
)

// Labels CAPTF passes to the backend, copied onto the Lease.
const (
	LabelOwnerKind = "captf.infrastructure.cluster.x-k8s.io/owner-kind"
	LabelOwnerName = "captf.infrastructure.cluster.x-k8s.io/owner-name"
	LabelManaged   = "captf.io/managed"
)

// Info is the lock-info annotation as CAPTF's controller decodes it: Go's
// encoding/json into exactly these fields, so a wrongly typed one of them or
// a Created that is not RFC 3339 fails the whole parse (and a wrongly typed
// field the controller does not read does not).
type Info struct {
	ID        string
	Operation string
	Who       string
	Version   string
	Created   time.Time
}

// Lease is a lock Lease taken apart: the metadata the verdicts and the
// output need, and the lock it holds. It keeps nothing else of the object
// (no managedFields, no spec beyond the holder), so a list of ten thousand
// costs what its locks do, not what the server sent.
type Lease struct {
	Namespace, Name   string
	UID               types.UID
	ResourceVersion   string
	CreationTimestamp metav1.Time
	Labels            map[string]string
	Workspace         string
	Suffix            string
	// Held is true when spec.holderIdentity is set, even to "".
	Held bool
	// ID is spec.holderIdentity: the ID the backend compares on unlock.
	ID string
	// Info is the parsed lock info; nil when the annotation is missing or
	// does not parse, with InfoErr saying which.
	Info    *Info
	InfoErr error
	// RuntimeInfoErr is set when the lock info decodes as CAPTF's
	// controller decodes it (Info) but not as terraform and OpenTofu do
	// (LockInfo): their Unlock then fails before it compares IDs.
	RuntimeInfoErr error
	// Printed is how many bytes of lock info terraform's Unlock prints
	// after "does not match existing lock" (LockInfo.Printed), and
	// TofuPrinted how many OpenTofu's does (LockInfo.TofuPrinted), where
	// the runtime decodes it.
	Printed, TofuPrinted int
	// Host is the text after the last "@" of Who; HostErr says why there
	// is none.
	Host    string
	HostErr error
	// Warnings are labels that disagree with the name (which wins).
	Warnings []string
}

// UnlockID is the ID an operator must name to clear the lock:
// spec.holderIdentity, the one the backend compares, or the lock info's ID
// where holderIdentity is "".
func (l Lease) UnlockID() string {
	if l.ID == "" && l.Info != nil {
		return l.Info.ID
	}
	return l.ID
}

// ErrNoLockInfo is InfoErr when the Lease has no lock-info annotation.
var ErrNoLockInfo = errors.New("the Lease has no " + AnnotationLock + " annotation")

// captfSuffix matches a CAPTF state suffix, to split a label-less Lease name.
var captfSuffix = regexp.MustCompile(`-([0-9a-f]{16}-(c|m|mp))$`)

// IsLockLease reports whether a Lease name is a Terraform/OpenTofu lock.
func IsLockLease(name string) bool { return strings.HasPrefix(name, object.LockLeasePrefix) }

// ParseLease takes a lock Lease apart. It never fails: whatever the holder
// wrote into the Lease ends up in InfoErr or HostErr.
func ParseLease(l *coordinationv1.Lease) Lease {
	p := Lease{
		Namespace: l.Namespace, Name: l.Name, UID: l.UID, ResourceVersion: l.ResourceVersion,
		CreationTimestamp: l.CreationTimestamp, Labels: l.Labels,
	}
	p.Workspace, p.Suffix = workspaceAndSuffix(l)
	p.Warnings = labelWarnings(p)
	if l.Spec.HolderIdentity == nil {
		return p
	}
	p.Held, p.ID = true, *l.Spec.HolderIdentity
	raw, ok := l.Annotations[AnnotationLock]
	if !ok {
		p.InfoErr = ErrNoLockInfo
		return p
	}
	var info Info
	if err := json.Unmarshal([]byte(raw), &info); err != nil {
		// A time's parse error quotes the holder's value: cut.
		p.InfoErr = fmt.Errorf("the lock info does not parse: %s", cut(err.Error(), maxStep))
		return p
	}
	p.Info = &info
	p.Host, p.HostErr = SplitWho(info.Who)
	var rt LockInfo
	if err := json.Unmarshal([]byte(raw), &rt); err != nil {
		p.RuntimeInfoErr = err
	} else {
		p.Printed, p.TofuPrinted = rt.Printed(), rt.TofuPrinted()
	}
	return p
}

// LockInfo is the lock info as terraform and OpenTofu decode it
// (statemgr.LockInfo, which their kubernetes backend's Unlock decodes
// with encoding/json before it compares IDs): the fields CAPTF reads,
// and Info and Path, both strings. A wrongly typed Info or Path, which
// CAPTF ignores, fails the runtime's decode and with it every
// force-unlock.
type LockInfo struct {
	ID        string
	Operation string
	Info      string
	Who       string
	Version   string
	Created   time.Time
	Path      string
}

// Lines is how many lines the lock info takes as the runtime's LockError
// prints it after "does not match existing lock": statemgr.LockInfo's
// String, a template of seven lines (terraform's
// internal/states/statemgr/locker.go at
// 35645b8fca68ff7e0b8785a3b563724a529a0caf, v1.11.4; OpenTofu's is the
// same) and the answer's own, more where a field holds newlines.
func (l LockInfo) Lines() int {
	n := 8
	for _, f := range []string{l.ID, l.Path, l.Operation, l.Who, l.Version, l.Info} {
		n += strings.Count(f, "\n")
	}
	return n
}

// TofuPrinted is about how many bytes OpenTofu prints of that lock info:
// its diagnostic printer prefixes each line with a coloured "│ " (about
// tofuLinePrefix bytes) and shows each other control character as a
// three-byte control picture (format.ReplaceControlChars at v1.12.6,
// b4305e5a5dd2fb79a27897ae30784a181d3a26cb; review26h m2, review26i F1).
func (l LockInfo) TofuPrinted() int {
	n := l.Printed() + tofuLinePrefix*l.Lines()
	for _, f := range []string{l.ID, l.Path, l.Operation, l.Who, l.Version, l.Info} {
		for i := 0; i < len(f); i++ {
			if (f[i] < 0x20 && f[i] != '\n') || f[i] == 0x7f {
				n += 2
			}
		}
	}
	return n
}

// Printed is the length of that lock info. The template's fixed text is
// 109 bytes.
func (l LockInfo) Printed() int {
	return 109 + len(l.ID) + len(l.Path) + len(l.Operation) + len(l.Who) + len(l.Version) + len(l.Created.String()) + len(l.Info)
}

// SplitWho returns the host of a lock's Who ("user@host"): the text after
// its last "@". No "@", or nothing after it, means no host can be named.
func SplitWho(who string) (string, error) {
	i := strings.LastIndexByte(who, '@')
	switch {
	case i < 0:
		return "", fmt.Errorf("Who %s has no \"@\"", Quoted(who))
	case i == len(who)-1:
		return "", fmt.Errorf("Who %s names no host after its \"@\"", Quoted(who))
	}
	return who[i+1:], nil
}

// workspaceAndSuffix splits the Lease's name "lock-tfstate-<workspace>-<suffix>".
// The name is the authority, as for CAPTF, which GETs the Lease
// lock-tfstate-default-<suffix of the object> by name and never reads its
// labels. A name ending in a CAPTF suffix splits there. Any other name
// (another tool's workspace) has no fixed split: there, and only there,
// labels that agree with the name choose it, for display.
func workspaceAndSuffix(l *coordinationv1.Lease) (workspace, suffix string) {
	rest := strings.TrimPrefix(l.Name, object.LockLeasePrefix)
	if m := captfSuffix.FindStringSubmatchIndex(rest); m != nil {
		return rest[:m[0]], rest[m[2]:]
	}
	ws, sfx := l.Labels[LabelWorkspace], l.Labels[LabelSecretSuffix]
	switch {
	case ws != "" && sfx != "" && rest == ws+"-"+sfx:
		return ws, sfx
	case sfx != "" && strings.HasSuffix(rest, "-"+sfx):
		return strings.TrimSuffix(rest, "-"+sfx), sfx
	case ws != "" && strings.HasPrefix(rest, ws+"-"):
		return ws, strings.TrimPrefix(rest, ws+"-")
	}
	workspace, suffix, _ = strings.Cut(rest, "-")
	return workspace, suffix
}

// labelWarnings names each backend label that disagrees with the Lease's
// name. CAPTF never reads them, so neither does the verdict: a label that
// disagrees is a sign the Lease was copied or tampered with, shown to the
// operator and never acted on.
func labelWarnings(p Lease) []string {
	var out []string
	for _, c := range []struct{ label, want string }{
		{LabelSecretSuffix, p.Suffix},
		{LabelWorkspace, p.Workspace},
	} {
		if v, ok := p.Labels[c.label]; ok && v != c.want {
			out = append(out, fmt.Sprintf("label %s=%s disagrees with the Lease name, which gives %s; CAPTF finds a lock by its name only, so the label is ignored", c.label, v, c.want))
		}
	}
	return out
}
