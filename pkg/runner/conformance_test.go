package runner_test

// Conformance of the own-pod test with CAPTF v0.1.x (issue 10).
//
// captfOwnsPod below is an independent model of CAPTF's jobs.OwnsPod,
// written from the algorithm of internal/jobs/name.go (Name, OwnsPod) and
// not from this package: it parses the pod name from the right as CAPTF
// does and compares the rebuilt Job name for string equality. The random
// test runs runner.OwnsPod against it; the table test replays CAPTF's own
// TestOwnsPod and TestNames (internal/jobs/jobs_test.go) with their data.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/pkg/runner"
)

// captfOps are CAPTF's runner ops (jobs.Op), plan and restore included.
var captfOps = []string{"apply", "destroy", "refresh", "drift", "restore", "plan"}

// captfMaxName is CAPTF's jobs.MaxNameLength.
const captfMaxName = 57

// captfName is CAPTF's jobs.Name: the clear form when it fits in 57
// characters, else the object name alone replaced by sha256(name)[:16].
func captfName(kindShort, name, op string, attempt int32, hash6 string) string {
	n := fmt.Sprintf("captf-%s-%s-%s-a%d-%s", kindShort, name, op, attempt, hash6)
	if len(n) <= captfMaxName {
		return n
	}
	sum := sha256.Sum256([]byte(name))
	return fmt.Sprintf("captf-%s-%s-%s-a%d-%s", kindShort, hex.EncodeToString(sum[:])[:16], op, attempt, hash6)
}

// captfHash6 is CAPTF's jobs.Hash6.
func captfHash6(inputsHash, op string, attempt int32, driftTick string) string {
	sum := sha256.Sum256([]byte(inputsHash + "\x00" + op + "\x00" + strconv.Itoa(int(attempt)) + "\x00" + driftTick))
	return hex.EncodeToString(sum[:])[:6]
}

// captfCutLast splits at the last "-"; ok is false when there is none.
func captfCutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndex(s, "-")
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// captfOwnsPod is CAPTF's jobs.OwnsPod(kindShort, name, pod).
func captfOwnsPod(kindShort, name, pod string) bool {
	job, podSuffix, ok := captfCutLast(pod)
	if !ok || len(podSuffix) != 5 {
		return false
	}
	rest, hash6, ok := captfCutLast(job)
	if !ok {
		return false
	}
	rest, a, ok := captfCutLast(rest)
	if !ok || len(a) < 2 || a[0] != 'a' {
		return false
	}
	attempt, err := strconv.ParseInt(a[1:], 10, 32)
	if err != nil {
		return false
	}
	_, op, ok := captfCutLast(rest)
	if !ok {
		return false
	}
	known := false
	for _, o := range captfOps {
		known = known || o == op
	}
	if !known {
		return false
	}
	return captfName(kindShort, name, op, int32(attempt), hash6) == job
}

func kindOf(t *testing.T, code string) object.Kind {
	t.Helper()
	k, ok := object.KindByCode(code)
	if !ok {
		t.Fatalf("no kind with code %q", code)
	}
	return k
}

// genOps are the ops the generator uses: its own list, so that a model
// missing an op is caught.
var genOps = []string{"apply", "destroy", "refresh", "drift", "restore", "plan"}

// podGen builds random pod names around real Job names.
type podGen struct{ r *rand.Rand }

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	hexs   = "0123456789abcdef"
)

func (g podGen) pick(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// name is a random object name of length 1..63 of letters, digits and
// dashes (mostly a valid DNS label), so that both the clear and the hashed
// Job name forms occur.
func (g podGen) name() string {
	n := 1 + g.r.IntN(63)
	if g.r.IntN(3) == 0 {
		n = 1 + g.r.IntN(12) // short names are the common case
	}
	b := []byte(g.pick(lower+lower+digits+"-", n))
	if g.r.IntN(8) != 0 { // usually valid: alphanumeric at both ends
		b[0] = lower[g.r.IntN(len(lower))]
		b[len(b)-1] = (lower + digits)[g.r.IntN(36)]
	}
	return string(b)
}

// attempt is an "a<N>" segment's number: 0, small, large, the int32 limit,
// or past it (which CAPTF's ParseInt(…, 32) rejects).
func (g podGen) attempt() string {
	switch g.r.IntN(10) {
	case 0:
		return "0"
	case 1:
		return strconv.Itoa(math.MaxInt32)
	case 2:
		return strconv.FormatInt(math.MaxInt32+1+g.r.Int64N(1<<40), 10) // overflow
	case 3:
		return strconv.Itoa(100000 + g.r.IntN(math.MaxInt32-100000))
	default:
		return strconv.Itoa(1 + g.r.IntN(20))
	}
}

// job is a real CAPTF Job name for (code, name), built with the model; for
// an attempt past int32 it is built in the same shape by hand.
func (g podGen) job(code, name, op, attempt, hash6 string) string {
	if n, err := strconv.ParseInt(attempt, 10, 32); err == nil {
		return captfName(code, name, op, int32(n), hash6)
	}
	s := "captf-" + code + "-" + name + "-" + op + "-a" + attempt + "-" + hash6
	if len(s) > captfMaxName {
		sum := sha256.Sum256([]byte(name))
		s = "captf-" + code + "-" + hex.EncodeToString(sum[:])[:16] + "-" + op + "-a" + attempt + "-" + hash6
	}
	return s
}

// mutate changes a pod name in one of the ways a look-alike differs.
func (g podGen) mutate(pod, code, name, op, attempt, hash6, tail string, codes []string) string {
	rebuild := func(code, name, op, a, hash6, tail string) string {
		return g.job(code, name, op, a, hash6) + "-" + tail
	}
	plain := func(code, seg, op, a, hash6, tail string) string {
		return "captf-" + code + "-" + seg + "-" + op + "-" + a + "-" + hash6 + "-" + tail
	}
	switch g.r.IntN(22) {
	case 0: // another object's name
		return rebuild(code, g.name(), op, attempt, hash6, tail)
	case 1: // a name one character longer or shorter (prefix look-alikes)
		if len(name) > 1 && g.r.IntN(2) == 0 {
			return rebuild(code, name[:len(name)-1], op, attempt, hash6, tail)
		}
		return rebuild(code, name+g.pick(lower+digits+"-", 1), op, attempt, hash6, tail)
	case 2: // another kind code
		return rebuild(codes[g.r.IntN(len(codes))], name, op, attempt, hash6, tail)
	case 3: // a tail of another length
		return g.job(code, name, op, attempt, hash6) + "-" + g.pick(lower+digits, []int{0, 1, 4, 6, 7, 10}[g.r.IntN(6)])
	case 4: // a zero-padded attempt
		return strings.Replace(pod, "-a"+attempt+"-", "-a0"+attempt+"-", 1)
	case 5: // a non-numeric attempt
		return strings.Replace(pod, "-a"+attempt+"-", "-a"+[]string{"x", "", "1x", " 1", "1.0", "-1"}[g.r.IntN(6)]+"-", 1)
	case 6: // a sign in the attempt, or no "a"
		return strings.Replace(pod, "-a"+attempt+"-", "-"+[]string{"a+", "A", "", "b", "aa"}[g.r.IntN(5)]+attempt+"-", 1)
	case 7: // an unknown op
		return rebuild(code, name, []string{"bogus", "import", "Apply", "apply2", "", "plan-apply"}[g.r.IntN(6)], attempt, hash6, tail)
	case 8: // truncated anywhere
		return pod[:g.r.IntN(len(pod)+1)]
	case 9: // truncated at 63, as a hostname over 63 would be
		if len(pod) > 63 {
			return pod[:63]
		}
		return pod[:len(pod)-1]
	case 10: // an extra dash somewhere
		i := g.r.IntN(len(pod) + 1)
		return pod[:i] + "-" + pod[i:]
	case 11: // a doubled dash
		i := strings.Index(pod, "-")
		return pod[:i] + "-" + pod[i:]
	case 12: // uppercase, all or one part
		if g.r.IntN(2) == 0 {
			return strings.ToUpper(pod)
		}
		return rebuild(code, name, op, attempt, strings.ToUpper(hash6), tail)
	case 13: // uppercase tail (a valid pod name it is not, but a host it can be)
		return rebuild(code, name, op, attempt, hash6, strings.ToUpper(tail))
	case 14: // the clear form where the hashed one is due, or the reverse
		return plain(code, name, op, "a"+attempt, hash6, tail)
	case 15:
		sum := sha256.Sum256([]byte(name))
		return plain(code, hex.EncodeToString(sum[:])[:16], op, "a"+attempt, hash6, tail)
	case 16: // a hash6 of another length or alphabet
		return rebuild(code, name, op, attempt, g.pick(hexs+"xyz", g.r.IntN(9)), tail)
	case 17: // another op of the six
		return rebuild(code, name, genOps[g.r.IntN(len(genOps))], attempt, hash6, tail)
	case 18: // a prefix other than captf-
		return strings.Replace(pod, "captf-", []string{"capt-", "captf", "CAPTF-", "x-captf-", ""}[g.r.IntN(5)], 1)
	case 19: // a past-int32 attempt
		return strings.Replace(pod, "-a"+attempt+"-", "-a"+strconv.FormatInt(math.MaxInt32+1, 10)+"-", 1)
	case 20: // a workstation host
		return []string{"laptop", "", "-", "-----", "a-a-a-a-a", "steven-laptop-x7k2p"}[g.r.IntN(6)]
	default: // one character changed
		b := []byte(pod)
		if len(b) > 0 {
			b[g.r.IntN(len(b))] = (lower + digits + "-")[g.r.IntN(37)]
		}
		return string(b)
	}
}

// runner.OwnsPod decides as CAPTF's OwnsPod on random pod names built
// around real Job names: own pods in the clear and the hashed form, every
// op and kind, attempts from 0 past the int32 limit, and look-alikes.
func TestConformanceOwnsPodRandom(t *testing.T) {
	const n = 150_000
	g := podGen{r: rand.New(rand.NewPCG(0xcab7f, 10))}
	codes := []string{"c", "m", "mp"}
	var own, foreign, hashed, clear, failures int
	for i := range n {
		code := codes[g.r.IntN(len(codes))]
		name := g.name()
		op := genOps[g.r.IntN(len(genOps))]
		if g.r.IntN(20) == 0 {
			op = []string{"bogus", "import", "APPLY"}[g.r.IntN(3)]
		}
		attempt := g.attempt()
		hash6 := g.pick(hexs, 6)
		tail := g.pick(lower+digits, 5)
		job := g.job(code, name, op, attempt, hash6)
		pod := job + "-" + tail
		if g.r.IntN(5) < 3 {
			pod = g.mutate(pod, code, name, op, attempt, hash6, tail, codes)
		}
		// Test against the pod's own object, or sometimes another kind of it.
		testCode, testName := code, name
		switch g.r.IntN(10) {
		case 0:
			testCode = codes[g.r.IntN(len(codes))]
		case 1:
			testName = g.name()
		}
		want := captfOwnsPod(testCode, testName, pod)
		err := runner.OwnsPod(kindOf(t, testCode), testName, pod)
		if got := err == nil; got != want {
			failures++
			if failures <= 20 {
				t.Errorf("case %d: OwnsPod(%q, %q, %q) = %v (%v), CAPTF says %v", i, testCode, testName, pod, got, err, want)
			}
		}
		if want {
			own++
			if strings.HasPrefix(pod, "captf-"+testCode+"-"+testName+"-") {
				clear++
			} else {
				hashed++
			}
		} else {
			foreign++
		}
	}
	t.Logf("%d pod names: %d own (%d clear, %d hashed form), %d not own; %d disagreements", n, own, clear, hashed, foreign, failures)
	if failures > 0 {
		t.Fatalf("%d of %d pod names decided differently from CAPTF", failures, n)
	}
	// The generator must exercise both answers and both name forms.
	if own < n/10 || foreign < n/10 || hashed < 1000 || clear < 1000 {
		t.Fatalf("poor coverage: %d own (%d clear, %d hashed), %d not own", own, clear, hashed, foreign)
	}
}

// CAPTF's TestOwnsPod (internal/jobs/jobs_test.go), every case with its data:
// OwnsPod("m", name, pod) with long = "n"×60.
func TestConformanceCAPTFOwnsPod(t *testing.T) {
	long := strings.Repeat("n", 60)
	cases := []struct {
		cite string
		name string
		pod  string
		want bool
	}{
		{"#1 own apply pod", "web", "captf-m-web-apply-a1-abc123-x7k2p", true},
		{"#2 name containing a dash", "web-1", "captf-m-web-1-drift-a12-abc123-x7k2p", true},
		{`#3 "a restore holds the lock too"`, "web", "captf-m-web-restore-a2-abc123-x7k2p", true},
		{`#4 long (hashed) name: Name("m", long, OpDestroy, 3, "abc123") + "-x7k2p"`, long, "captf-m-fb886b452111b2ed-destroy-a3-abc123-x7k2p", true},
		{`#5 "another kind"`, "web", "captf-c-web-apply-a1-abc123-x7k2p", false},
		{`#6 "another object"`, "web", "captf-m-web-1-apply-a1-abc123-x7k2p", false},
		{`#7 "no pod suffix"`, "web", "captf-m-web-apply-a1-abc123", false},
		{`#8 "a plan holds the lock too"`, "web", "captf-m-web-plan-a1-abc123-x7k2p", true},
		{`#9 "unknown op"`, "web", "captf-m-web-bogus-a1-abc123-x7k2p", false},
		{`#10 "no a<attempt>"`, "web", "captf-m-web-apply-1-abc123-x7k2p", false},
		{"#11 malformed attempt", "web", "captf-m-web-apply-ax-abc123-x7k2p", false},
		{"#12 unrelated name", "web", "laptop", false},
		{"#13 empty", "web", "", false},
	}
	if got := captfName("m", long, "destroy", 3, "abc123") + "-x7k2p"; got != cases[3].pod {
		t.Fatalf("transcription: the model builds case #4's pod as %q", got)
	}
	for _, c := range cases {
		cite := "captf: internal/jobs/jobs_test.go TestOwnsPod " + c.cite
		if model := captfOwnsPod("m", c.name, c.pod); model != c.want {
			t.Errorf("%s: the model says %v, CAPTF's test %v", cite, model, c.want)
		}
		if err := runner.OwnsPod(object.TerraformMachine, c.name, c.pod); (err == nil) != c.want {
			t.Errorf("%s: OwnsPod(m, %q, %q) = %v, want own=%v", cite, c.name, c.pod, err, c.want)
		}
	}
}

// CAPTF's TestNames (internal/jobs/jobs_test.go), with its data; the Hash6
// values are those CAPTF's Hash6 gives for these inputs.
func TestConformanceCAPTFNames(t *testing.T) {
	hash6 := map[string]string{"apply": "577205", "destroy": "c3512e", "refresh": "2925af", "drift": "9f9caa", "restore": "0b39d4"}
	for op, h := range hash6 {
		if got := captfHash6("h1:x", op, 1, ""); got != h {
			t.Fatalf("transcription: Hash6(h1:x, %s, 1, \"\") = %s, tests.md has %s", op, got, h)
		}
	}
	// The loop: op × name × kind code, attempt MaxInt32.
	for _, op := range []string{"apply", "destroy", "refresh", "drift", "restore"} {
		for _, name := range []string{"m", strings.Repeat("n", 200), strings.Repeat("x", 40)} {
			for _, ks := range []string{"c", "m", "mp"} {
				cite := fmt.Sprintf("captf: internal/jobs/jobs_test.go TestNames op=%s name=%.10q(len %d) ks=%s", op, name, len(name), ks)
				n := runner.JobName(kindOf(t, ks), name, op, math.MaxInt32, hash6[op])
				if model := captfName(ks, name, op, math.MaxInt32, hash6[op]); n != model {
					t.Errorf("%s: JobName = %q, CAPTF's Name = %q", cite, n, model)
				}
				if len(n) > 57 || len(validation.IsDNS1123Subdomain(n)) > 0 || len(content.IsLabelValue(n)) > 0 || len(n)+6 > 63 {
					t.Errorf("%s: %q (len %d) is not a valid, untruncated Job name", cite, n, len(n))
				}
				if err := runner.OwnsPod(kindOf(t, ks), name, n+"-x7k2p"); err != nil {
					t.Errorf("%s: its own pod %q is rejected: %v", cite, n+"-x7k2p", err)
				}
			}
		}
	}
	// The values tests.md gives for that loop.
	for _, c := range []struct {
		ks, name, op, want string
	}{
		{"m", "m", "apply", "captf-m-m-apply-a2147483647-577205"},
		{"mp", strings.Repeat("n", 200), "restore", "captf-mp-1be63cc0bde6bd45-restore-a2147483647-0b39d4"},
		{"c", strings.Repeat("x", 40), "destroy", "captf-c-bd913ff68243d41b-destroy-a2147483647-c3512e"},
	} {
		if got := runner.JobName(kindOf(t, c.ks), c.name, c.op, math.MaxInt32, hash6[c.op]); got != c.want {
			t.Errorf("captf: TestNames loop value: JobName(%s, %.10q, %s) = %q, want %q", c.ks, c.name, c.op, got, c.want)
		}
	}
	// The exact value.
	if got := runner.JobName(object.TerraformMachine, "web", "apply", 3, "abcdef"); got != "captf-m-web-apply-a3-abcdef" {
		t.Errorf(`captf: TestNames exact value: Name("m", "web", OpApply, 3, "abcdef") = %q`, got)
	}
	// No collision between two long names hashed to 16 characters.
	long := strings.Repeat("n", 200)
	a := runner.JobName(object.TerraformMachine, long, "apply", 1, "aaaaaa")
	b := runner.JobName(object.TerraformMachine, long+"x", "apply", 1, "aaaaaa")
	if a != "captf-m-1be63cc0bde6bd45-apply-a1-aaaaaa" || b != "captf-m-88d5fedb04e6173a-apply-a1-aaaaaa" || a == b {
		t.Errorf("captf: TestNames no collision: %q / %q", a, b)
	}
	if runner.OwnsPod(object.TerraformMachine, long, b+"-x7k2p") == nil || runner.OwnsPod(object.TerraformMachine, long+"x", a+"-x7k2p") == nil {
		t.Errorf("captf: TestNames no collision: one long name's pod is accepted as the other's")
	}
	// The golden Job of TestGoldenJobs/apply: spec(OpApply), InputsHash h1:abc.
	h := captfHash6("h1:abc", "apply", 1, "")
	if got := runner.JobName(object.TerraformMachine, "prod-md-0-abcde", "apply", 1, h); got != "captf-m-prod-md-0-abcde-apply-a1-dbb569" {
		t.Errorf("captf: internal/jobs/testdata/apply.yaml: JobName = %q", got)
	}
}
