package testbed

import (
	"slices"
	"testing"
)

// The runtimes run with the environment CAPTF's runner gives its steps:
// the TF_* and KUBE_* variables it drops are not passed on (review26b N7).
func TestEnvDropsWhatCAPTFsRunnerDrops(t *testing.T) {
	t.Setenv("TF_WORKSPACE", "other")
	t.Setenv("TF_CLI_ARGS_init", "-backend=false")
	t.Setenv("KUBE_CONFIG_PATH", "/elsewhere")
	t.Setenv("KUBE_NAMESPACE", "kept")
	env := Terraform{}.env()
	for _, dropped := range []string{"TF_WORKSPACE=other", "TF_CLI_ARGS_init=-backend=false", "KUBE_CONFIG_PATH=/elsewhere"} {
		if slices.Contains(env, dropped) {
			t.Errorf("the runtime's environment keeps %s, which CAPTF's runner drops", dropped)
		}
	}
	for _, kept := range []string{"KUBE_NAMESPACE=kept", "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1"} {
		if !slices.Contains(env, kept) {
			t.Errorf("the runtime's environment lacks %s", kept)
		}
	}
}
