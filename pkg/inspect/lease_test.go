package inspect

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLeaseWorkspaceAndSuffix(t *testing.T) {
	cases := []struct {
		name   string
		labels map[string]string
		ws     string
		suffix string
	}{
		{"lock-tfstate-default-0b41ac905b337e94-c", map[string]string{LabelWorkspace: "default", LabelSecretSuffix: "0b41ac905b337e94-c"}, "default", "0b41ac905b337e94-c"},
		// Dashes in both: only the labels can split them.
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelWorkspace: "my-ws", LabelSecretSuffix: "my-suffix"}, "my-ws", "my-suffix"},
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelSecretSuffix: "my-suffix"}, "my-ws", "my-suffix"},
		{"lock-tfstate-my-ws-my-suffix", map[string]string{LabelWorkspace: "my-ws"}, "my-ws", "my-suffix"},
		// No labels: a CAPTF suffix is recognised from the right.
		{"lock-tfstate-default-0b41ac905b337e94-c", nil, "default", "0b41ac905b337e94-c"},
		{"lock-tfstate-blue-green-7c1ed7a877508259-mp", nil, "blue-green", "7c1ed7a877508259-mp"},
		{"lock-tfstate-default-other", nil, "default", "other"},
	}
	for _, c := range cases {
		l := ParseLease(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels}})
		if l.Workspace != c.ws || l.Suffix != c.suffix {
			t.Errorf("%s %v: workspace %q suffix %q, want %q %q", c.name, c.labels, l.Workspace, l.Suffix, c.ws, c.suffix)
		}
	}
}

func TestSplitWho(t *testing.T) {
	for who, host := range map[string]string{"root@pod": "pod", "@pod": "pod", "a@b@pod": "pod"} {
		if h, err := SplitWho(who); err != nil || h != host {
			t.Errorf("SplitWho(%q) = %q, %v", who, h, err)
		}
	}
	for _, who := range []string{"", "root", "root@", "a@b@"} {
		if h, err := SplitWho(who); err == nil {
			t.Errorf("SplitWho(%q) = %q, want an error", who, h)
		}
	}
}
