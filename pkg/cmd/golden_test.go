package cmd

import (
	"slices"
	"strings"
	"testing"
)

// The human output of each command, for a lock of each verdict, read from
// a fake API server and compared with the golden files of testdata/.
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
			f, srv := verdictsWorld().factory(t)
			res := captf(t, f, c.args...)
			if res.code != 0 || res.err != "" {
				t.Fatalf("exit %d: %s", res.code, res.err)
			}
			golden(t, c.name, res.out)
			// One list of the Leases, and not a write.
			if n, w := srv.Count("list", "leases"), writes(srv); n != 1 || len(w) != 0 {
				t.Errorf("%d lists of leases, writes %q", n, w)
			}
		})
	}
}

func TestGoldenExplain(t *testing.T) {
	for _, target := range []string{"terraformcluster/free", "terraformcluster/demo", "terraformmachine/web-1", "terraformmachine/db", "terraformmachinepool/cache"} {
		t.Run(target, func(t *testing.T) {
			f, srv := verdictsWorld().factory(t)
			res := captf(t, f, "explain", target)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.err)
			}
			golden(t, "explain-"+strings.ReplaceAll(target, "/", "-")+".txt", res.out+res.err)
			if w := writes(srv); len(w) != 0 {
				t.Errorf("explain writes %q", w)
			}
			// State Secrets are read by metadata only: never their data.
			for _, r := range srv.Requests() {
				if r.Resource == "secrets" && (r.Verb != "list" || !strings.HasPrefix(r.Accept, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;")) {
					t.Errorf("%s %s?%s, Accept %q: not a list of metadata", r.Verb, r.Path, r.Query.Encode(), r.Accept)
				}
			}
			if srv.Count("list", "secrets") != 1 {
				t.Errorf("%d lists of secrets, want 1", srv.Count("list", "secrets"))
			}
		})
	}
}

// unlock's dry run of each verdict, then the unlock of the stale one and
// the refusals of the others with --confirm.
func TestGoldenUnlock(t *testing.T) {
	for _, c := range []struct {
		target string
		code   int
		// lease is the Lease written with --confirm, if any.
		lease string
	}{
		{"terraformcluster/free", 0, ""},
		{"terraformcluster/demo", 3, ""},
		{"terraformmachine/web-1", 0, "lock-tfstate-default-2f32fa8c86da1c86-m"},
		{"terraformmachine/db", 3, ""},
		{"terraformmachinepool/cache", 3, ""},
	} {
		for _, confirm := range []bool{false, true} {
			name := "unlock-" + strings.ReplaceAll(c.target, "/", "-")
			args := []string{"unlock", c.target}
			if confirm {
				name += "-confirm"
				args = append(args, "--confirm")
			}
			t.Run(name, func(t *testing.T) {
				f, srv := verdictsWorld().factory(t)
				res := captf(t, f, args...)
				if res.code != c.code {
					t.Fatalf("exit %d, want %d: %s%s", res.code, c.code, res.out, res.err)
				}
				golden(t, name+".txt", res.out+res.err)
				// A dry run or a refusal writes nothing; an unlock, the
				// Lease and then its Event.
				var want []string
				if confirm && c.lease != "" {
					want = []string{"update leases infra/" + c.lease, "create events infra/"}
				}
				if w := writes(srv); !slices.Equal(w, want) {
					t.Errorf("writes %q, want %q", w, want)
				}
			})
		}
	}
}
