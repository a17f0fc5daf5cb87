package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// noKubeconfig is the error of a run that found no configuration at all:
// no kubeconfig file (--kubeconfig, the files of $KUBECONFIG, or
// ~/.kube/config), no --server, and no in-cluster configuration.
// cli-runtime then falls back to clientcmd's default server,
// http://localhost:8080, whose refused connection would tell the user
// nothing of the missing kubeconfig; kubectl says the same, but a plugin
// run from a cron job or a fresh shell is better told where it looked.
// cfg is the configuration the flags resolved to; nil error when it came
// from somewhere.
func (f *factory) noKubeconfig(cfg *rest.Config) error {
	if cfg.Host != clientcmd.ClusterDefaults.Server {
		return nil // a kubeconfig, --server or the in-cluster configuration
	}
	if fl := f.flags; fl != nil && fl.APIServer != nil && *fl.APIServer != "" {
		return nil // the user asked for that server
	}
	loader := f.getter.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil || !clientcmdapi.IsConfigEmpty(&raw) {
		return nil
	}
	return fmt.Errorf("no kubeconfig was found: %s, and %s; give --kubeconfig or set KUBECONFIG",
		lookedAt(loader.ConfigAccess()), inCluster())
}

// lookedAt says which kubeconfig files were looked for, as clientcmd's
// loading rules look: the --kubeconfig file, else $KUBECONFIG's files,
// else ~/.kube/config.
func lookedAt(access clientcmd.ConfigAccess) string {
	if access.IsExplicitFile() {
		return access.GetExplicitFile() + " holds no configuration"
	}
	files := access.GetLoadingPrecedence()
	var seen []string
	for _, p := range files {
		if _, err := os.Stat(p); err == nil {
			seen = append(seen, p)
		}
	}
	switch {
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "":
		if len(seen) > 0 {
			return fmt.Sprintf("KUBECONFIG is not set and %s holds no configuration", strings.Join(files, ", "))
		}
		return fmt.Sprintf("KUBECONFIG is not set and %s does not exist", strings.Join(files, ", "))
	case len(seen) > 0:
		return fmt.Sprintf("KUBECONFIG=%s holds no configuration", strings.Join(files, string(os.PathListSeparator)))
	}
	return fmt.Sprintf("KUBECONFIG=%s names no file that exists", strings.Join(files, string(os.PathListSeparator)))
}

// inCluster says why the in-cluster configuration was not used.
func inCluster() string {
	_, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return "this is not a pod (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset), so there is no in-cluster configuration"
	}
	return "there is no in-cluster configuration"
}
