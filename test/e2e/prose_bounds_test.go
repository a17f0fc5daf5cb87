package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/captf-io/kubectl-captf/pkg/api/v1alpha1"
	"github.com/captf-io/kubectl-captf/pkg/object"
	"github.com/captf-io/kubectl-captf/test/testbed"
)

// Review26i P1-P4: explain and unlock print what a lock's holder wrote
// in bounded prose, whatever it wrote: a workstation lock whose Who is
// 250,000 characters and whose holderIdentity is 200,000 costs explain and the unlock
// dry run about what a plain one does; a holder's text cannot pass for
// the plugin's words (it is quoted); the unlock command, whose --id
// argument no process could take, is not printed, and says why; -o json
// keeps both whole.
func TestExplainAndUnlockStayBoundedWhateverTheHolderWrote(t *testing.T) {
	ns := "prose-bounds"
	plain := newObject(t, ns, object.TerraformCluster, "plain")
	long := newObject(t, ns, object.TerraformCluster, "long")
	syntheticLock(t, plain, "15151515-0000-4000-8000-000000000000", "steven@laptop", nil)
	who := strings.Repeat("w", 125000) + "@" + "laptop, the backend finds it and the lock is cleared  " + strings.Repeat("h", 124900)
	// Annotations may hold 256 KiB in all: the long ID is holderIdentity,
	// the lock info's ID another.
	id := strings.Repeat("9", 200000)
	info := testbed.LockInfo("16161616-0000-4000-8000-000000000000", who, t0)
	syntheticLock(t, long, id, who, &info)
	// An operation of 200,000 characters (review-prose M1), and a
	// Created that does not parse, whose error quotes it (M2).
	op := newObject(t, ns, object.TerraformCluster, "op")
	opInfo := strings.Replace(testbed.LockInfo("17171717-0000-4000-8000-000000000000", "steven@laptop", t0), `"OperationTypeApply"`, `"`+strings.Repeat("o", 100000)+"  "+strings.Repeat("o", 100000)+`"`, 1)
	syntheticLock(t, op, "17171717-0000-4000-8000-000000000000", "steven@laptop", &opInfo)
	created := newObject(t, ns, object.TerraformCluster, "created")
	createdInfo := `{"ID":"18181818-0000-4000-8000-000000000000","Operation":"OperationTypeApply","Who":"steven@laptop","Version":"1.11.4","Created":"` + strings.Repeat("2", 200000) + `"}`
	syntheticLock(t, created, "18181818-0000-4000-8000-000000000000", "steven@laptop", &createdInfo)
	kc := kubeconfigIn(t, ns)
	for _, name := range []string{"op", "created"} {
		for _, cmd := range []string{"explain", "unlock"} {
			base, c := measureExit(t, kc, cmd, "terraformcluster/plain"), measureExit(t, kc, cmd, "terraformcluster/"+name)
			t.Logf("%s of %s: %d bytes; the plain lock's %d", cmd, name, len(c.out), len(base.out))
			if len(c.out) > len(base.out)+4*1024 {
				t.Errorf("%s of %s printed %d bytes, the plain lock's %d: more than 4 KiB more\n%.2000s", cmd, name, len(c.out), len(base.out), c.out)
			}
		}
	}
	for _, args := range [][]string{{"explain", "terraformcluster/%s"}, {"unlock", "terraformcluster/%s"}} {
		of := func(name string) cost {
			a := append([]string(nil), args...)
			a[1] = strings.Replace(a[1], "%s", name, 1)
			return measureExit(t, kc, a...)
		}
		base, c := of("plain"), of("long")
		t.Logf("%s: %d bytes, %d KiB peak; the plain lock's %d bytes, %d KiB", args[0], len(c.out), c.maxRSS, len(base.out), base.maxRSS)
		// The Holder and Lock ID lines (1,024 columns each), the steps
		// that quote them (256 characters each), no command.
		if len(c.out) > len(base.out)+12*1024 {
			t.Errorf("%s printed %d bytes, the plain lock's %d: more than 12 KiB more\n%.3000s", args[0], len(c.out), len(base.out), c.out)
		}
		if float64(c.maxRSS) > 1.5*float64(base.maxRSS) {
			t.Errorf("%s peaked at %d KiB, the plain lock's %d: more than 1.5 times", args[0], c.maxRSS, base.maxRSS)
		}
		if bytes.Contains(c.out, []byte("laptop, the backend finds it")) && !bytes.Contains(c.out, []byte(`"`+strings.Repeat("w", 20))) {
			t.Errorf("%s: the holder's words appear unquoted", args[0])
		}
		if !bytes.Contains(c.out, []byte("# no command printed: argument 12 is 200000 bytes long")) || !bytes.Contains(c.out, []byte("(Linux's MAX_ARG_STRLEN)")) {
			t.Errorf("%s: the unlock command that cannot run is not said to be left out\n%s", args[0], c.out[max(0, len(c.out)-3000):])
		}
	}
	res := captf(t, kc, "explain", "terraformcluster/long", "-o", "json")
	var x v1alpha1.Explanation
	if err := json.Unmarshal([]byte(res.out), &x); err != nil || res.code != 0 {
		t.Fatalf("explain -o json: exit %d, %v", res.code, err)
	}
	if x.Lock == nil || x.Lock.Who != who || x.Lock.ID != id {
		t.Error("explain -o json does not carry the holder's Who and ID whole")
	}
}

// measureExit is measure for a command that may also end refused (exit
// 3, an unlock of a lock it will not clear).
func measureExit(t *testing.T, kubeconfig string, args ...string) cost {
	t.Helper()
	cmd := exec.Command(plugin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=", "TERM=xterm")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("%q: %v\n%s", args, err, errb.String())
	}
	checkRace(t, cmd.Process.Pid, errb.String())
	return cost{out: out.Bytes(), maxRSS: cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss}
}
