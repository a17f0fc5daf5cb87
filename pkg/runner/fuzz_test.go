package runner

import (
	"strings"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/object"
)

func seedNames(f *testing.F) {
	for _, s := range []string{
		"captf-c-demo-apply-a1-d72d2a-x7k2p", "captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p",
		"captf-m-web-1-apply-a3-0a1b2c-abcde", "laptop", "", "-----", "captf-c--apply-a0--x7k2p",
		"captf-c-demo-apply-a+1-d72d2a-x7k2p", "captf-c-demo-apply-a01-d72d2a-x7k2p", "a-a-a-a-a",
	} {
		f.Add(s, "demo", uint8(0))
	}
}

// The own-pod test never accepts a name that the Job-name builder cannot
// produce: whatever it accepts is JobName(...) + "-" + a 5-character tail.
func FuzzOwnsPod(f *testing.F) {
	seedNames(f)
	f.Add("captf-mp-60129d0c29257200-restore-a1-6dc941-x7k2p", "prod-eu-west-1-workers-spot-pool-large", uint8(2))
	f.Fuzz(func(t *testing.T, pod, name string, k uint8) {
		kind := object.Kinds[int(k)%len(object.Kinds)]
		if OwnsPod(kind, name, pod) != nil {
			return
		}
		p, err := ParsePodName(pod)
		if err != nil {
			t.Fatalf("accepted %q but it does not parse: %v", pod, err)
		}
		if built := JobName(kind, name, p.Op, p.Attempt, p.Hash6) + "-" + p.Tail; built != pod || len(p.Tail) != PodTailLen {
			t.Fatalf("accepted %q, which the builder makes as %q", pod, built)
		}
	})
}

// Building a Job name and a pod name from it, then testing it, round-trips.
func FuzzJobName(f *testing.F) {
	f.Add("demo", uint8(0), uint8(0), int32(1), "d72d2a", "x7k2p")
	f.Add("prod-eu-west-1-workers-spot-pool-large", uint8(2), uint8(4), int32(1), "6dc941", "x7k2p")
	f.Add("web-1", uint8(1), uint8(5), int32(2147483647), "0a1b2c", "abcde")
	f.Fuzz(func(t *testing.T, name string, k, op uint8, attempt int32, hash6, tail string) {
		kind := object.Kinds[int(k)%len(object.Kinds)]
		o := Ops[int(op)%len(Ops)]
		job := JobName(kind, name, o, attempt, hash6)
		if len(job) > MaxJobNameLen && !strings.Contains(job, object.ShortHash(name)) {
			t.Fatalf("%q is over %d characters and not hashed", job, MaxJobNameLen)
		}
		// The parts a pod name is split at cannot contain the separator.
		if attempt < 0 || strings.Contains(hash6, "-") || len(tail) != PodTailLen || strings.Contains(tail, "-") {
			return
		}
		if err := OwnsPod(kind, name, job+"-"+tail); err != nil {
			t.Fatalf("the builder's own pod %q is rejected: %v", job+"-"+tail, err)
		}
	})
}
