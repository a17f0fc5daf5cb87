package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

// PodName is a pod name taken apart the way CAPTF's own-pod test takes it
// apart, from the right.
type PodName struct {
	// Job is the pod name without its 5-character tail.
	Job     string
	Op      string
	Attempt int32
	Hash6   string
	Tail    string
	// Kind and NameSegment come from the left part "captf-<code>-<segment>";
	// the segment is the object name, or sha256(name)[:16] for long names.
	// Kind is only set when the code is a known one.
	Kind        *object.Kind
	NameSegment string
}

// ParsePodName splits a pod name as CAPTF's OwnsPod does: at its last "-"
// (a 5-character tail), then hash6, then "a<attempt>" (a base-10 int32),
// then one of the six ops. The error says which part a look-alike lacks.
func ParsePodName(pod string) (PodName, error) {
	job, tail, ok := cutLast(pod)
	if !ok || len(tail) != PodTailLen {
		return PodName{}, fmt.Errorf("%q does not end in a %d-character pod suffix", pod, PodTailLen)
	}
	p, err := parseJob(pod, job)
	p.Tail = tail
	return p, err
}

// ParseJobName splits a runner Job name as ParsePodName splits the part of
// a pod name before its tail.
func ParseJobName(job string) (PodName, error) { return parseJob(job, job) }

// parseJob splits job, naming whole (a pod or Job name) in its errors.
func parseJob(whole, job string) (PodName, error) {
	pod := whole
	rest, hash6, ok := cutLast(job)
	if !ok {
		return PodName{}, fmt.Errorf("%q has no Job hash before its pod suffix", pod)
	}
	rest, attempt, ok := cutLast(rest)
	if !ok || !strings.HasPrefix(attempt, "a") {
		return PodName{}, fmt.Errorf("%q has no attempt \"a<N>\" before its Job hash", pod)
	}
	n, err := strconv.ParseInt(attempt[1:], 10, 32)
	if err != nil {
		return PodName{}, fmt.Errorf("%q has attempt %q, which is not \"a\" and a number", pod, attempt)
	}
	rest, op, ok := cutLast(rest)
	if !ok || !isOp(op) {
		return PodName{}, fmt.Errorf("%q has %q where a runner op (%s) belongs", pod, op, strings.Join(Ops, ", "))
	}
	p := PodName{Job: job, Op: op, Attempt: int32(n), Hash6: hash6}
	for _, k := range object.Kinds {
		if seg, found := strings.CutPrefix(rest, "captf-"+k.Code+"-"); found {
			p.Kind, p.NameSegment = &k, seg
			break
		}
	}
	return p, nil
}

// OwnsPod is CAPTF's own-pod test: whether pod is a pod of a runner Job of
// the object (kind, name). It parses the pod name, rebuilds the Job name
// from the object and the parsed op, attempt and hash, with the 57-character
// rule, and requires it to equal the pod name without its tail. That accepts
// both the clear and the hashed form and names with dashes, and rejects
// another object's pods even when one name is a prefix of the other. A nil
// error means the pod is the object's own; otherwise the error says why not.
func OwnsPod(kind object.Kind, name, pod string) error {
	p, err := ParsePodName(pod)
	if err != nil {
		return err
	}
	if want := JobName(kind, name, p.Op, p.Attempt, p.Hash6); want != p.Job {
		return fmt.Errorf("%q is not a pod of %s %s: its Job would be named %q", pod, kind.Name, name, want)
	}
	return nil
}

// cutLast splits s at its last "-".
func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
