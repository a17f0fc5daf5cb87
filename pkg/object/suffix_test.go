package object

import "testing"

// The worked examples of the domain reference, verified against CAPTF.
func TestStateSuffix(t *testing.T) {
	cases := []struct {
		namespace string
		kind      Kind
		name      string
		want      string
	}{
		{"default", TerraformCluster, "demo", "0b41ac905b337e94-c"},
		{"team-a", TerraformMachine, "web", "1cc4ffb6d396d1c4-m"},
		{"prod", TerraformMachinePool, "prod-eu-west-1-workers-spot-pool-large", "7c1ed7a877508259-mp"},
	}
	for _, c := range cases {
		if got := StateSuffix(c.namespace, c.kind, c.name); got != c.want {
			t.Errorf("StateSuffix(%s/%s/%s) = %q, want %q", c.namespace, c.kind.Name, c.name, got, c.want)
		}
	}
}

// The hash is over the CamelCase kind: a lowercased kind gives a wrong suffix.
func TestStateSuffixUsesCamelCaseKind(t *testing.T) {
	lower := Kind{Name: "terraformcluster", Code: "c"}
	if got := StateSuffix("default", lower, "demo"); got != "5909507121f31c8c-c" {
		t.Fatalf("lowercase kind suffix = %q", got)
	}
	if StateSuffix("default", lower, "demo") == StateSuffix("default", TerraformCluster, "demo") {
		t.Fatal("lowercase and CamelCase kinds must hash differently")
	}
}

func TestNames(t *testing.T) {
	if got := LockLeaseName(DefaultWorkspace, "0b41ac905b337e94-c"); got != "lock-tfstate-default-0b41ac905b337e94-c" {
		t.Errorf("LockLeaseName = %q", got)
	}
	if got := StateSecretName(DefaultWorkspace, "0b41ac905b337e94-c"); got != "tfstate-default-0b41ac905b337e94-c" {
		t.Errorf("StateSecretName = %q", got)
	}
	if got := (Ref{Kind: TerraformMachinePool, Namespace: "x", Name: "p"}).String(); got != "terraformmachinepool/p" {
		t.Errorf("Ref.String = %q", got)
	}
}

func TestKindLookups(t *testing.T) {
	for _, k := range Kinds {
		if got, ok := KindByCode(k.Code); !ok || got != k {
			t.Errorf("KindByCode(%q) = %v, %v", k.Code, got, ok)
		}
		if got, ok := KindByName(k.Name); !ok || got != k {
			t.Errorf("KindByName(%q) = %v, %v", k.Name, got, ok)
		}
	}
	if _, ok := KindByCode("x"); ok {
		t.Error("unknown code accepted")
	}
	if _, ok := KindByName("terraformcluster"); ok {
		t.Error("lowercase kind accepted")
	}
}
