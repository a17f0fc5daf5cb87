package cmd

import (
	"strings"
	"testing"
)

// The human output of each command, for a lock of each verdict, built on
// fakes and compared with the golden files of testdata/.
func TestGoldenLocks(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"locks.txt", []string{"locks"}},
		{"locks-wide.txt", []string{"locks", "-o", "wide"}},
		{"locks-all-namespaces.txt", []string{"locks", "-A", "--no-headers"}},
		{"locks-name.txt", []string{"locks", "-o", "name"}},
		{"locks-jsonpath.txt", []string{"locks", "-o", `jsonpath={range .items[*]}{.verdict}{" "}{.object.name}{"\n"}{end}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, _ := verdictsWorld().factory()
			res := captf(t, f, c.args...)
			if res.code != 0 || res.err != "" {
				t.Fatalf("exit %d: %s", res.code, res.err)
			}
			golden(t, c.name, res.out)
		})
	}
}

func TestGoldenExplain(t *testing.T) {
	for _, target := range []string{"terraformcluster/free", "terraformcluster/demo", "terraformmachine/web-1", "terraformmachine/db", "terraformmachinepool/cache"} {
		t.Run(target, func(t *testing.T) {
			f, _ := verdictsWorld().factory()
			res := captf(t, f, "explain", target)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.err)
			}
			golden(t, "explain-"+strings.ReplaceAll(target, "/", "-")+".txt", res.out+res.err)
		})
	}
}

// unlock's dry run of each verdict, then the unlock of the stale one and
// the refusals of the others with --confirm.
func TestGoldenUnlock(t *testing.T) {
	for _, c := range []struct {
		target string
		code   int
	}{
		{"terraformcluster/free", 0},
		{"terraformcluster/demo", 3},
		{"terraformmachine/web-1", 0},
		{"terraformmachine/db", 3},
		{"terraformmachinepool/cache", 3},
	} {
		for _, confirm := range []bool{false, true} {
			name := "unlock-" + strings.ReplaceAll(c.target, "/", "-")
			args := []string{"unlock", c.target}
			if confirm {
				name += "-confirm"
				args = append(args, "--confirm")
			}
			t.Run(name, func(t *testing.T) {
				f, _ := verdictsWorld().factory()
				res := captf(t, f, args...)
				if res.code != c.code {
					t.Fatalf("exit %d, want %d: %s%s", res.code, c.code, res.out, res.err)
				}
				golden(t, name+".txt", res.out+res.err)
			})
		}
	}
}
