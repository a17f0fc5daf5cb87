// Package audit lays out the Event that records an operator's unlock. The
// Event is a note for whoever looks at the object later; it is not
// authenticated (anyone allowed to create Events in the namespace can
// write one that looks the same), so the API server's audit log remains
// the record of who wrote the Lease. What the note can promise is that a
// lock holder, who chose the lock ID and Who, cannot make it name another
// Lease or verdict.
package audit

import "strconv"

// Event fields of a recorded unlock.
const (
	Reason     = "OperatorForceUnlocked"
	Action     = "ForceUnlock"
	Controller = "captf.io/kubectl-captf"
)

// MaxNote is the most bytes of a note the API accepts.
const MaxNote = 1024

// Holder is what the lock's holder wrote: shown in the note, quoted, after
// everything the plugin itself established.
type Holder struct {
	// Known is false when the lock info could not be read.
	Known              bool
	ID, Who, Operation string
}

// Note is an unlock's Event note: the user, the Lease, the verdict, then
// the holder's fields, each quoted in ASCII so that no byte of theirs can
// pass for the note's own words or hide. Only the holder's part is cut to
// fit MaxNote, and the cut is marked. user is "" when the server would not
// say who the user is; impersonated is true when the run impersonated
// that user (--as, or as: in the kubeconfig), whose real identity only the
// audit log records.
func Note(user string, impersonated bool, namespace, lease, verdict string, h Holder) string {
	who := "an unidentified user"
	if user != "" {
		who = "user " + clip(quote(user), 256)
	}
	if impersonated {
		who += " (impersonated)"
	}
	head := who + " force-unlocked Lease " + namespace + "/" + lease + " (verdict " + verdict + ") with kubectl captf; "
	tail := "held by an unidentifiable holder, lock ID " + quote(h.ID)
	if h.Known {
		tail = "held by Who " + quote(h.Who) + ", operation " + quote(h.Operation) + ", lock ID " + quote(h.ID)
	}
	if len(head)+len(tail) <= MaxNote {
		return head + tail
	}
	return head + clip(tail, MaxNote-len(head))
}

// quote quotes s in ASCII: every other byte is escaped.
func quote(s string) string { return strconv.QuoteToASCII(s) }

// clip keeps at most n bytes of s, an ASCII string, marking a cut.
func clip(s string, n int) string {
	const mark = " [cut]"
	if len(s) <= n {
		return s
	}
	return s[:max(0, n-len(mark))] + mark
}
