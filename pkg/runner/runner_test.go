package runner

import (
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

func TestJobName(t *testing.T) {
	cases := []struct {
		kind    object.Kind
		name    string
		op      string
		attempt int32
		hash6   string
		want    string
	}{
		{object.TerraformCluster, "demo", "apply", 1, "d72d2a", "captf-c-demo-apply-a1-d72d2a"},
		{object.TerraformMachine, "web-1", "destroy", 12, "abcdef", "captf-m-web-1-destroy-a12-abcdef"},
		// 65 characters in clear, so the whole name segment is hashed.
		{object.TerraformMachinePool, "prod-eu-west-1-workers-spot-pool-large", "restore", 1, "6dc941",
			"captf-mp-60129d0c29257200-restore-a1-6dc941"},
	}
	for _, c := range cases {
		if got := JobName(c.kind, c.name, c.op, c.attempt, c.hash6); got != c.want {
			t.Errorf("JobName(%s, %q) = %q, want %q", c.kind.Code, c.name, got, c.want)
		}
	}
}

// The 57-character boundary: 57 stays in clear, 58 is hashed.
func TestJobNameLengthRule(t *testing.T) {
	// "captf-c-" + name + "-apply-a1-d72d2a" is 8 + len(name) + 16.
	at := strings.Repeat("n", 57-24)
	if got := JobName(object.TerraformCluster, at, "apply", 1, "d72d2a"); len(got) != 57 || !strings.Contains(got, at) {
		t.Errorf("57-character name was changed: %q", got)
	}
	over := at + "x"
	got := JobName(object.TerraformCluster, over, "apply", 1, "d72d2a")
	if want := "captf-c-" + object.ShortHash(over) + "-apply-a1-d72d2a"; got != want {
		t.Errorf("58-character name: got %q, want %q", got, want)
	}
	// The choice is made per Job: a larger attempt can tip the same object over.
	short := JobName(object.TerraformCluster, at, "apply", 9, "d72d2a")
	long := JobName(object.TerraformCluster, at, "apply", 10, "d72d2a")
	if !strings.Contains(short, at) || strings.Contains(long, at) {
		t.Errorf("per-Job choice: %q / %q", short, long)
	}
}

// Every accepted and rejected name of the domain reference.
func TestOwnsPod(t *testing.T) {
	pool := "prod-eu-west-1-workers-spot-pool-large"
	cases := []struct {
		kind object.Kind
		name string
		pod  string
		own  bool
		why  string
	}{
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a1-d72d2a-x7k2p", true, ""},
		{object.TerraformMachinePool, pool, "captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p", true, ""},
		{object.TerraformMachine, "web-1", "captf-m-web-1-apply-a3-0a1b2c-abcde", true, ""},
		{object.TerraformMachine, "web", "captf-m-web-drift-a0-0a1b2c-abcde", true, ""},
		{object.TerraformCluster, "demo", "captf-c-demo-plan-a2147483647-d72d2a-x7k2p", true, ""},
		// The same object's pod in the clear form when the hashed form is
		// not due is not accepted the other way round.
		{object.TerraformMachinePool, pool, "captf-mp-" + pool + "-restore-a1-6dc941-x7k2p", false, "would be named"},
		// Another object's pod: web-1's pod is not web's.
		{object.TerraformMachine, "web", "captf-m-web-1-apply-a1-d72d2a-x7k2p", false, "would be named"},
		// Another kind's pod.
		{object.TerraformMachine, "demo", "captf-c-demo-apply-a1-d72d2a-x7k2p", false, "would be named"},
		{object.TerraformMachine, "demo", "captf-mp-demo-apply-a1-d72d2a-x7k2p", false, "would be named"},
		// No 5-character tail.
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a1-d72d2a", false, "5-character pod suffix"},
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a1-d72d2a-x7k2", false, "5-character pod suffix"},
		// Unknown op.
		{object.TerraformCluster, "demo", "captf-c-demo-import-a1-d72d2a-x7k2p", false, "runner op"},
		// "a" missing or not a number.
		{object.TerraformCluster, "demo", "captf-c-demo-apply-1-d72d2a-x7k2p", false, "attempt"},
		{object.TerraformCluster, "demo", "captf-c-demo-apply-ax-d72d2a-x7k2p", false, "attempt"},
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a-d72d2a-x7k2p", false, "attempt"},
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a2147483648-d72d2a-x7k2p", false, "attempt"},
		// Non-canonical attempts parse, but the rebuilt name differs.
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a01-d72d2a-x7k2p", false, "would be named"},
		{object.TerraformCluster, "demo", "captf-c-demo-apply-a+1-d72d2a-x7k2p", false, "would be named"},
		// A workstation.
		{object.TerraformCluster, "demo", "laptop", false, "5-character pod suffix"},
		{object.TerraformCluster, "demo", "", false, "5-character pod suffix"},
	}
	for _, c := range cases {
		err := OwnsPod(c.kind, c.name, c.pod)
		if c.own && err != nil {
			t.Errorf("OwnsPod(%s %s, %q) rejected: %v", c.kind.Name, c.name, c.pod, err)
		}
		if !c.own && (err == nil || !strings.Contains(err.Error(), c.why)) {
			t.Errorf("OwnsPod(%s %s, %q) = %v, want a rejection mentioning %q", c.kind.Name, c.name, c.pod, err, c.why)
		}
	}
}

func TestParsePodName(t *testing.T) {
	p, err := ParsePodName("captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p")
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind == nil || *p.Kind != object.TerraformMachinePool || p.NameSegment != "60129d0c29257200" ||
		p.Op != "restore" || p.Attempt != 1 || p.Hash6 != "6dc941" || p.Tail != "x7k2p" ||
		p.Job != "captf-mp-60129d0c29257200-restore-a1-6dc941" {
		t.Fatalf("parsed %+v", p)
	}
	p, err = ParsePodName("captf-m-web-1-apply-a3-0a1b2c-abcde")
	if err != nil || p.Kind == nil || *p.Kind != object.TerraformMachine || p.NameSegment != "web-1" {
		t.Fatalf("parsed %+v, %v", p, err)
	}
	// A well-formed tail on an unknown prefix parses, with no kind.
	p, err = ParsePodName("other-thing-apply-a1-d72d2a-x7k2p")
	if err != nil || p.Kind != nil {
		t.Fatalf("parsed %+v, %v", p, err)
	}
}
