package inspect

import (
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Whatever a holder writes, parsing never panics, and a parsed Who splits
// at its last "@".
func FuzzParseLockInfo(f *testing.F) {
	for _, s := range []string{
		lockInfo(lockID, "root@"+demoPod), `{`, `null`, `[]`, `{"ID":5}`, `{"Created":"2026-13-01T00:00:00Z"}`,
		`{"who":"a@b@c","created":"2026-09-26T15:53:38Z"}`, "{\"Who\":\"\xff\xfe@host\"}", `{"Who":"x@"}`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, info string, held bool) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-default-x", Annotations: map[string]string{AnnotationLock: info}}}
		if held {
			l.Spec.HolderIdentity = ptr(lockID)
		}
		p := ParseLease(l)
		if !held {
			if p.Held || p.Info != nil {
				t.Fatal("an unheld Lease has lock info")
			}
			return
		}
		if (p.Info == nil) == (p.InfoErr == nil) {
			t.Fatalf("Info %v and InfoErr %v", p.Info, p.InfoErr)
		}
		if p.Info != nil && p.HostErr == nil && !strings.HasSuffix(p.Info.Who, "@"+p.Host) {
			t.Fatalf("Who %q, host %q", p.Info.Who, p.Host)
		}
		// Classify never panics on it either.
		Classify(Facts{Lease: p})
	})
}

func FuzzSplitWho(f *testing.F) {
	for _, s := range []string{"root@pod", "@pod", "root@", "", "a@b@c", "no-at", "@", "@@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, who string) {
		host, err := SplitWho(who)
		if err != nil {
			if host != "" {
				t.Fatalf("error %v with host %q", err, host)
			}
			return
		}
		if host == "" || strings.Contains(host, "@") || who[:len(who)-len(host)-1]+"@"+host != who {
			t.Fatalf("SplitWho(%q) = %q", who, host)
		}
	})
}

// Lease names split into workspace and suffix that rebuild the name,
// whatever the labels say: the name is the authority, as for CAPTF. Labels
// only choose the split of a name that has no CAPTF suffix, and any label
// that disagrees with the split is a warning.
func FuzzLeaseName(f *testing.F) {
	for _, s := range []string{"default-0b41ac905b337e94-c", "blue-green-7c1ed7a877508259-mp", "default-other", "x", "-", "a--b"} {
		f.Add(s, "", "")
	}
	f.Add("my-ws-my-suffix", "my-ws", "")
	f.Add("my-ws-my-suffix", "", "my-suffix")
	f.Fuzz(func(t *testing.T, rest, wsLabel, suffixLabel string) {
		labels := map[string]string{}
		if wsLabel != "" {
			labels[LabelWorkspace] = wsLabel
		}
		if suffixLabel != "" {
			labels[LabelSecretSuffix] = suffixLabel
		}
		l := ParseLease(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "lock-tfstate-" + rest, Labels: labels}})
		if strings.Contains(rest, "-") && l.Workspace+"-"+l.Suffix != rest {
			t.Fatalf("%q split into %q and %q", rest, l.Workspace, l.Suffix)
		}
		for label, got := range map[string]string{LabelWorkspace: l.Workspace, LabelSecretSuffix: l.Suffix} {
			v, ok := labels[label]
			warned := strings.Contains(strings.Join(l.Warnings, "\n"), "label "+label+"=")
			if ok && v != got && !warned {
				t.Fatalf("label %s=%q disagrees with %q unwarned", label, v, got)
			}
			if warned && (!ok || v == got) {
				t.Fatalf("label %s warned about wrongly: %q", label, l.Warnings)
			}
		}
		if wsLabel != "" && suffixLabel != "" && rest == wsLabel+"-"+suffixLabel && !captfSuffix.MatchString(rest) &&
			(l.Workspace != wsLabel || l.Suffix != suffixLabel) {
			t.Fatalf("labels that agree with the name not taken: %q %q", l.Workspace, l.Suffix)
		}
	})
}
