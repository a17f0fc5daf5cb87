package k9s

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// k9sSource reads a file of the k9s module.
func k9sSource(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// k9sSchema compiles one of k9s's own JSON schemas, the ones its
// validator embeds (internal/config/json/schemas).
func k9sSchema(t *testing.T, dir, name string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(k9sSource(t, dir, "internal/config/json/schemas/"+name)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// instance is a YAML document as the schema validator sees it.
func instance(t *testing.T, y []byte) any {
	t.Helper()
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The file validates against k9s's plugins schema, the first one k9s's
// ValidatePlugins tries, so k9s reads it as a plugins file (a top-level
// `plugins:` map).
func TestPluginsFileValidatesAgainstK9sSchema(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) { validatesAgainstK9sSchema(t, v) })
	}
}

func validatesAgainstK9sSchema(t *testing.T, version string) {
	dir, err := ModuleDir(version)
	if err != nil {
		t.Fatal(err)
	}
	schema := k9sSchema(t, dir, "plugins.json")
	b, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(instance(t, b)); err != nil {
		t.Fatalf("%s does not validate against k9s %s's plugins schema:\n%v", File, version, err)
	}
	if !bytes.Contains(k9sSource(t, dir, "internal/config/json/validator.go"), []byte("range []string{PluginsSchema, PluginSchema, PluginMultiSchema}")) {
		t.Error("k9s's ValidatePlugins no longer tries the plugins schema first")
	}
	// The schema is not vacuous: an entry without a command, or a
	// misspelt top-level key, is refused.
	for _, broken := range []string{
		strings.Replace(string(b), "    command: bash\n", "", 1),
		strings.Replace(string(b), "plugins:\n", "plugin:\n", 1),
		strings.Replace(string(b), "    confirm: true\n", "    confirm: yes please\n", 1),
	} {
		if broken == string(b) {
			t.Fatal("the broken copy is the same as the file")
		}
		if err := schema.Validate(instance(t, []byte(broken))); err == nil {
			t.Errorf("a broken copy validates:\n%.300s", broken)
		}
	}
}

// How each version substitutes an arg and decides to confirm (0.51: confirm
// unset means "ask when there are inputs"; the file sets it on every entry).
var (
	substitute = map[string]string{"v0.50.16": "arg, err := r.EnvFn()().Substitute(a)", "v0.51.0": "arg, err := env.Substitute(a)"}
	confirm    = map[string]string{"v0.50.16": "if p.Confirm {", "v0.51.0": "if p.ShouldConfirm() {"}
)

// The mirror of k9s in this package is k9s's: the Plugin fields, the
// variable syntax, RESOURCE_NAME as the view's plural, and the command
// run without a shell.
func TestMirrorMatchesK9sSource(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) { mirrorMatchesK9sSource(t, v) })
	}
}

func mirrorMatchesK9sSource(t *testing.T, version string) {
	dir, err := ModuleDir(version)
	if err != nil {
		t.Fatal(err)
	}
	// config.Plugin's yaml tags are this Plugin's json tags.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "plugin.go", k9sSource(t, dir, "internal/config/plugin.go"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var theirs []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Plugin" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			tag, _ := strconv.Unquote(fld.Tag.Value)
			// k9s 0.51's input dialog: the file does not use it, since
			// 0.50 has none (docs/k9s.md); Load's strict decoding fails on
			// an inputs key.
			if name := reflect.StructTag(tag).Get("yaml"); name != "inputs" {
				theirs = append(theirs, name)
			}
		}
		return false
	})
	var ours []string
	pt := reflect.TypeFor[Plugin]()
	for i := range pt.NumField() {
		ours = append(ours, pt.Field(i).Tag.Get("json"))
	}
	slices.Sort(theirs)
	slices.Sort(ours)
	if len(theirs) == 0 || !slices.Equal(theirs, ours) {
		t.Errorf("k9s's Plugin fields %q, ours %q", theirs, ours)
	}
	for rel, wants := range map[string][]string{
		"internal/view/env.go": {"regexp.MustCompile(`" + EnvRX + "`)", "sort.Slice(matches, func(i, j int) bool {\n\t\treturn len(matches[i][0]) > len(matches[j][0])",
			"v, ok := e[strings.ToUpper(key)]", "strconv.ParseBool(v)", "arg = strings.ReplaceAll(arg, m[0], v)"},
		"internal/view/table.go":   {`env["RESOURCE_NAME"] = t.GVR().R()`, `env["RESOURCE_GROUP"] = t.GVR().G()`},
		"internal/view/helpers.go": {"ss.Insert(m.Name)", `"CONTEXT":    ctx,`, `"KUBECONFIG": cfg,`, `env["NAMESPACE"], env["NAME"] = client.Namespaced(path)`},
		"internal/view/actions.go": {substitute[version], "binary:     p.Command,", "background: p.Background,", confirm[version],
			"(ro && pp.Plugins[k].Dangerous)"},
		// A foreground command gets k9s's terminal: Shift-I reads the
		// lock ID from it. (k9s 0.50 has no input dialog for plugins: its
		// Plugin has no inputs field, which the comparison above would
		// show.)
		"internal/view/exec.go": {"cmd := exec.CommandContext(ctx, opts.binary, opts.args...)", "clearScreen()",
			"cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr", "a.Halt()", "return a.Suspend(func() {"},
	} {
		src := string(k9sSource(t, dir, rel))
		for _, want := range wants {
			if !strings.Contains(src, want) {
				t.Errorf("k9s %s %s no longer has %q", version, rel, want)
			}
		}
	}
}

func TestSubstituteAsK9s(t *testing.T) {
	env := ObjectEnv("kind-a", "c", "u", "", "infrastructure.cluster.x-k8s.io", "v1beta1", "terraformclusters", "infra", "demo")
	for in, want := range map[string]string{
		"$RESOURCE_NAME/$NAME":                 "terraformclusters/demo",
		"$RESOURCE_NAME.$RESOURCE_GROUP/$NAME": "terraformclusters.infrastructure.cluster.x-k8s.io/demo",
		"$captf_id":                            "$captf_id", // k9s looks up CAPTF_ID, which it does not have
		"$name":                                "demo",      // upper-cased before the lookup
		"lease/$NAME":                          "lease/demo",
		"${NAMESPACE}":                         "infra",
		`"$1" --context "$2"`:                  `"$1" --context "$2"`, // not k9s's: left for the shell
		"$NAMESPACE$NAME":                      "infrademo",
		"--context=$CONTEXT":                   "--context=kind-a",
		"$KUBECONFIG":                          "",
		"-+F":                                  "-+F",
		"$UNKNOWN and $!CONTEXT":               "$UNKNOWN and kind-a",
	} {
		if got := env.Substitute(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// What the file promises: for each of the four views the overview of every
// lock, an explain, a dry run, an unlock --confirm and an unlock that asks
// for the lock ID, the last two asked about by k9s and hidden in read-only
// mode; the output shown (foreground); the view's context and namespace.
func TestPluginsFileEntries(t *testing.T) {
	p, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	type role struct{ overview, explain, dryRun, confirm, withID string }
	views := map[string]*role{"terraformclusters": {}, "terraformmachines": {}, "terraformmachinepools": {}, "leases": {}}
	for _, name := range p.Names() {
		e := p.Plugins[name]
		if e.Background || e.Command != "bash" || len(e.Args) != 7 || e.Args[0] != "-c" || e.Args[2] != "captf" || e.Override || len(e.Pipes) > 0 {
			t.Errorf("%s: %+v", name, e)
			continue
		}
		script := e.Args[1]
		if strings.Count(script, "$") != strings.Count(script, `"$`) || !slices.Equal(e.Args[4:], []string{"$CONTEXT", "$NAMESPACE", "$KUBECONFIG"}) ||
			!strings.Contains(script, `--context "$2"`) || !strings.HasPrefix(script, `set -o pipefail; if [ -n "$4" ]; then export KUBECONFIG="$4"; fi`) {
			t.Errorf("%s: the script must take the k9s variables as quoted positional parameters: %q", name, e.Args)
		}
		if got := ObjectEnv("x", "", "", "", "", "", "r", "ns", "n").Substitute(script); got != script {
			t.Errorf("%s: k9s would rewrite the script itself", name)
		}
		if slices.Contains(e.Scopes, "leases") && len(e.Scopes) > 1 {
			t.Errorf("%s mixes leases with the kinds", name)
		}
		var slot func(*role) *string
		switch {
		case strings.Contains(script, `kubectl captf locks -A -o wide --context "$2" 2>&1 | less -R -+F -S`):
			slot = func(r *role) *string { return &r.overview }
			if e.Confirm || e.Dangerous {
				t.Errorf("%s: the overview is neither confirmed nor dangerous", name)
			}
		case strings.Contains(script, `kubectl captf explain "$1" --context "$2" -n "$3" 2>&1 | less -R -+F`):
			slot = func(r *role) *string { return &r.explain }
			if e.Confirm || e.Dangerous {
				t.Errorf("%s: explain is neither confirmed nor dangerous", name)
			}
		case strings.Contains(script, "read -r captf_id") && strings.Contains(script, `kubectl captf unlock "$1" --context "$2" -n "$3" --id "$captf_id" "${captf_force[@]}" --confirm`):
			slot = func(r *role) *string { return &r.withID }
			if !e.Confirm || !e.Dangerous {
				t.Errorf("%s: unlock --id --confirm needs confirm: true and dangerous: true", name)
			}
		case strings.Contains(script, `kubectl captf unlock "$1" --context "$2" -n "$3" --confirm 2>&1 | less -R -+F`):
			slot = func(r *role) *string { return &r.confirm }
			if !e.Confirm || !e.Dangerous {
				t.Errorf("%s: unlock --confirm needs confirm: true and dangerous: true", name)
			}
		case strings.Contains(script, `kubectl captf unlock "$1" --context "$2" -n "$3" 2>&1 | less -R -+F`) && !strings.Contains(script, "--confirm"):
			slot = func(r *role) *string { return &r.dryRun }
			if e.Confirm || e.Dangerous {
				t.Errorf("%s: a dry run is neither confirmed nor dangerous", name)
			}
		default:
			t.Errorf("%s: %q", name, script)
			continue
		}
		for _, s := range e.Scopes {
			r := views[s]
			if r == nil {
				t.Errorf("%s: scope %q", name, s)
				continue
			}
			want := "$RESOURCE_NAME.$RESOURCE_GROUP/$NAME"
			if s == "leases" {
				want = "lease/$NAME"
			}
			if e.Args[3] != want {
				t.Errorf("%s: target %q in scope %s, want %q", name, e.Args[3], s, want)
			}
			if p := slot(r); *p != "" {
				t.Errorf("scope %s: %s and %s do the same", s, *p, name)
			} else {
				*p = e.ShortCut
			}
		}
	}
	for s, r := range views {
		keys := []string{r.overview, r.explain, r.dryRun, r.confirm, r.withID}
		if slices.Contains(keys, "") || len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
			t.Errorf("scope %s: shortcuts overview %q, explain %q, dry run %q, confirm %q, with ID %q: each set and different", s, r.overview, r.explain, r.dryRun, r.confirm, r.withID)
		}
	}
}
