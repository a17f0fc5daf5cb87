// Package k9s reads docs/k9s/captf.yaml and runs its entries as k9s does:
// the plugin file as k9s decodes it, k9s's variable substitution, and the
// command run with the substituted args. The k9s source these mirror is
// the module github.com/derailed/k9s at each of Versions, found (or
// downloaded) in the Go module cache by ModuleDir; the tests compare the
// mirror with each.
package k9s

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Module is k9s's module; Versions are the k9s releases whose schema and
// behaviour the plugin file is checked against: the file works in each.
const Module = "github.com/derailed/k9s"

var Versions = []string{"v0.50.16", "v0.51.0"}

// File is the shipped plugins file, relative to the repository root.
const File = "docs/k9s/captf.yaml"

// Plugin is one entry, as k9s's config.Plugin (internal/config/plugin.go).
type Plugin struct {
	Scopes          []string `json:"scopes"`
	Args            []string `json:"args"`
	ShortCut        string   `json:"shortCut"`
	Override        bool     `json:"override"`
	Pipes           []string `json:"pipes"`
	Description     string   `json:"description"`
	Command         string   `json:"command"`
	Confirm         bool     `json:"confirm"`
	Background      bool     `json:"background"`
	Dangerous       bool     `json:"dangerous"`
	OverwriteOutput bool     `json:"overwriteOutput"`
}

// Plugins is a plugins file: the top-level `plugins:` map.
type Plugins struct {
	Plugins map[string]Plugin `json:"plugins"`
}

// RepoRoot is the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Read returns the shipped file's bytes.
func Read() ([]byte, error) {
	return os.ReadFile(filepath.Join(RepoRoot(), File))
}

// Load decodes the shipped file strictly: a key k9s does not know fails.
func Load() (*Plugins, error) {
	b, err := Read()
	if err != nil {
		return nil, err
	}
	var p Plugins
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", File, err)
	}
	return &p, nil
}

// Names are the entries' names, sorted.
func (p *Plugins) Names() []string {
	var names []string
	for n := range p.Plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ModuleDir is the directory of k9s's module at version in the Go module
// cache. `go mod download` finds it there, or downloads it from the module
// proxy first.
func ModuleDir(version string) (string, error) {
	tmp, err := os.MkdirTemp("", "k9s-module-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", Module+"@"+version)
	cmd.Dir = tmp // outside this module: its go.mod and go.sum stay as they are
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v\n%s%s", Module, version, err, out.String(), errb.String())
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		return "", err
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %q", Module, version, info.Error)
	}
	return info.Dir, nil
}

// Env is k9s's view.Env: the variables a plugin's args may use.
type Env map[string]string

// EnvRX is k9s's envRX (internal/view/env.go), verbatim: $XXX, $!XXX,
// ${XXX} or ${!XXX}.
const EnvRX = `(\$(!?)([\w\-]+))|(\$\{(!?)([\w\-%/: ]+)})`

var envRX = regexp.MustCompile(EnvRX)

// Substitute is k9s's Env.Substitute: the longest matches first, unknown
// names left as they are, booleans (and their $! inverse) normalised.
func (e Env) Substitute(arg string) string {
	matches := envRX.FindAllStringSubmatch(arg, -1)
	sort.Slice(matches, func(i, j int) bool { return len(matches[i][0]) > len(matches[j][0]) })
	for _, m := range matches {
		key, inverse := m[6], m[5] == "!"
		if m[1] != "" {
			key, inverse = m[3], m[2] == "!"
		}
		v, ok := e[strings.ToUpper(key)]
		if !ok {
			continue
		}
		if b, err := strconv.ParseBool(v); err == nil {
			if inverse {
				b = !b
			}
			v = fmt.Sprintf("%t", b)
		}
		arg = strings.ReplaceAll(arg, m[0], v)
	}
	return arg
}

// ObjectEnv is the Env k9s builds for a selected row of a resource view
// (view.Table.defaultEnv with k8sEnv): the object's namespace and name,
// the view's group, version and resource (the plural), and the
// connection's context, cluster, user and kubeconfig.
func ObjectEnv(context, cluster, user, kubeconfig, group, version, resource, namespace, name string) Env {
	return Env{
		"CONTEXT":          context,
		"CLUSTER":          cluster,
		"USER":             user,
		"GROUPS":           "",
		"KUBECONFIG":       kubeconfig,
		"NAMESPACE":        namespace,
		"NAME":             name,
		"FILTER":           name,
		"RESOURCE_GROUP":   group,
		"RESOURCE_VERSION": version,
		"RESOURCE_NAME":    resource,
	}
}

// Cmd is the process k9s starts for an entry (view.pluginAction, then
// execute): Command with every arg substituted, no shell in between.
func (p Plugin) Cmd(env Env) *exec.Cmd {
	args := make([]string, len(p.Args))
	for i, a := range p.Args {
		args[i] = env.Substitute(a)
	}
	return exec.Command(p.Command, args...)
}
