package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/shell"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// cost is what one run of the plugin took: the bytes it printed on
// stdout and its peak resident memory.
type cost struct {
	out    []byte
	maxRSS int64 // KiB
}

// measure runs the plugin and returns its output and peak RSS; the test
// fails unless it exits 0.
func measure(t *testing.T, kubeconfig string, args ...string) cost {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, errb.String())
	}
	checkRace(t, cmd.Process.Pid, errb.String())
	return cost{out: out.Bytes(), maxRSS: cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss}
}

// heldLease writes a held lock Lease with no owner object, as a holder
// outside CAPTF may: its lock info says who holds it.
func heldLease(t *testing.T, ns, suffix, id, who string) {
	t.Helper()
	info := testbed.LockInfo(id, who, t0)
	if _, err := admin.LockLease(context.Background(), ns, suffix, nil, &id, &info); err != nil {
		t.Fatal(err)
	}
}

// One Lease whose holder wrote a 250,000-character Who, among a few
// hundred, costs `locks -A` and `-o wide` about what any other lock does:
// the bytes printed and the peak memory stay within a bound of the same
// run without it (the table pads its columns to the widest cell, so a cut
// cell widens every row by at most its bound). -o json still carries the
// whole Who.
func TestOneLongLeaseCostsTheTableItsBounds(t *testing.T) {
	ns := "table-bounds"
	for i := range 300 {
		heldLease(t, ns, fmt.Sprintf("%016x-c", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("root@captf-c-obj%03d-apply-a1-d72d2a-x7k2p", i))
	}
	kc := kubeconfigIn(t, ns)
	runs := [][]string{{"locks", "-A"}, {"locks", "-A", "-o", "wide"}}
	var base []cost
	for _, args := range runs {
		base = append(base, measure(t, kc, args...))
	}
	long := strings.Repeat("x", 125000) + "@" + strings.Repeat("h", 124999)
	heldLease(t, ns, "ffffffffffffffff-c", "ffffffff-0000-4000-8000-000000000000", long)
	for i, args := range runs {
		c := measure(t, kc, args...)
		t.Logf("%q: %d bytes, %d KiB peak; without the long Lease %d bytes, %d KiB", args, len(c.out), c.maxRSS, len(base[i].out), base[i].maxRSS)
		if !bytes.Contains(c.out, []byte("xxxx…")) {
			t.Errorf("%q: the long Who is not shown cut with …", args)
		}
		// Every row's HOLDER padded to the cut Who (100 columns, not 40),
		// and one row of bounds: at most twice the bytes. Unbounded, the
		// Who alone is 250 kB, and every row is padded to it.
		if len(c.out) > 2*len(base[i].out) {
			t.Errorf("%q printed %d bytes, %d without the long Lease: more than twice", args, len(c.out), len(base[i].out))
		}
		if float64(c.maxRSS) > 1.3*float64(base[i].maxRSS) {
			t.Errorf("%q peaked at %d KiB, %d without the long Lease: more than 1.3 times", args, c.maxRSS, base[i].maxRSS)
		}
	}
	res := captf(t, kc, "locks", "-o", "json")
	var list v1alpha1.LockList
	if err := json.Unmarshal([]byte(res.out), &list); err != nil || res.code != 0 {
		t.Fatalf("-o json: exit %d, %v", res.code, err)
	}
	whole := false
	for _, l := range list.Items {
		whole = whole || (l.Lock != nil && l.Lock.Who == long)
	}
	if !whole || len(list.Items) != 301 {
		t.Errorf("-o json: %d items, the long Who whole: %v", len(list.Items), whole)
	}
}

// gaps are the gaps between the columns of a table row: three spaces or
// more.
var gaps = regexp.MustCompile(` {3,}`)

// A Who padded with runs of spaces to look like the next columns makes no
// column of its own: each row has the header's columns, and the spaces
// show as \x20.
func TestSpacesInAWhoMakeNoColumn(t *testing.T) {
	ns := "table-spaces"
	heldLease(t, ns, "0123456789abcdef-c", "11111111-2222-3333-4444-555555555555", "ops@laptop   apply   2m   ")
	for _, args := range [][]string{{"locks"}, {"locks", "-o", "wide"}} {
		res := captf(t, kubeconfigIn(t, ns), args...)
		lines := strings.Split(strings.TrimRight(res.out, "\n"), "\n")
		if res.code != 0 || len(lines) != 2 {
			t.Fatalf("%q: exit %d\n%s%s", args, res.code, res.out, res.err)
		}
		header, row := gaps.Split(lines[0], -1), gaps.Split(lines[1], -1)
		if len(row) != len(header) || row[2] != `ops@laptop\x20\x20\x20apply\x20\x20\x202m\x20\x20\x20` {
			t.Errorf("%q: %d columns under %d headers, HOLDER %q:\n%s", args, len(row), len(header), row[min(2, len(row)-1)], res.out)
		}
	}
}

// A go-template that decodes a holder's base64 text writes it to a pipe
// as it is, and to a terminal escaped: the template's output is escaped,
// not only the values it was given.
func TestGoTemplateOutputIsEscapedOnATerminal(t *testing.T) {
	ns := "template-decoded"
	raw := "\x1b]0;pwned\x07\x1b[2J"
	heldLease(t, ns, "0123456789abcdef-c", "11111111-2222-3333-4444-555555555555", base64.StdEncoding.EncodeToString([]byte(raw)))
	kc := kubeconfigIn(t, ns)
	args := []string{"locks", "-o", `go-template={{range .items}}{{.lock.who | base64decode}}{{"\t"}}{{printf "%c" 7}}{{"\n"}}{{end}}`}
	if res := captf(t, kc, args...); res.code != 0 || res.out != raw+"\t\x07\n" {
		t.Errorf("to a pipe: exit %d, %q, want %q", res.code, res.out, raw+"\t\x07\n")
	}
	line, err := shell.Line(append([]string{plugin, "--kubeconfig", kc}, args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("script", "-qec", line, "/dev/null").Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if strings.ContainsAny(string(out), "\x1b\x07") || string(out) != "^[]0;pwned^G^[[2J\t^G\r\n" {
		t.Errorf("to a terminal: %q, want %q", out, "^[]0;pwned^G^[[2J\t^G\r\n")
	}
}

// A holder's newline in -o yaml is written as \n in a double-quoted
// string, never raw in a literal block where its next line reads as the
// document's own; the YAML parses back to the same Who.
func TestYAMLWritesNoHolderNewlineRaw(t *testing.T) {
	ns := "yaml-newline"
	r := newObject(t, ns, object.TerraformMachine, "db")
	who := "ops@laptop\nfake: injected\n"
	syntheticLock(t, r, "11111111-2222-3333-4444-555555555555", who, nil)
	kc := kubeconfigIn(t, ns)
	for _, args := range [][]string{{"locks", "-o", "yaml"}, {"explain", r.String(), "-o", "yaml"}} {
		res := captf(t, kc, args...)
		if res.code != 0 || !strings.Contains(res.out, `who: "ops@laptop\nfake: injected\n"`) || regexp.MustCompile(`(?m)^\s*fake: injected`).MatchString(res.out) {
			t.Errorf("%q: exit %d, the newline is not escaped:\n%s%s", args, res.code, res.out, res.err)
		}
		var back struct {
			Items []v1alpha1.Lock    `json:"items"`
			Lock  *v1alpha1.LockInfo `json:"lock"`
		}
		if err := yaml.Unmarshal([]byte(res.out), &back); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if got := back.Lock; (got == nil && (len(back.Items) != 1 || back.Items[0].Lock == nil || back.Items[0].Lock.Who != who)) || (got != nil && got.Who != who) {
			t.Errorf("%q: the Who does not parse back:\n%s", args, res.out)
		}
	}
}
