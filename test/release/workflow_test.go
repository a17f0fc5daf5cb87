package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// readYAML decodes a file of the repository.
func readYAML(t *testing.T, rel string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

type workflow struct {
	// On is `on:`, which a YAML 1.1 decoder reads as the boolean true.
	On   map[string]any `json:"true"`
	Jobs map[string]struct {
		Uses        string            `json:"uses"`
		Needs       any               `json:"needs"`
		If          string            `json:"if"`
		Permissions map[string]string `json:"permissions"`
		Steps       []struct {
			Uses string `json:"uses"`
			Run  string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
	Permissions map[string]string `json:"permissions"`
}

// A tag cannot publish a commit whose tests failed: the release job needs
// the test job, which is the CI workflow itself (make test and make
// release-check through .ci/run), called on the tagged commit. Only the
// release job may write.
func TestReleaseWaitsForCI(t *testing.T) {
	var rel, ci workflow
	readYAML(t, ".github/workflows/release.yml", &rel)
	readYAML(t, ".github/workflows/ci.yml", &ci)

	if _, ok := ci.On["workflow_call"]; !ok {
		t.Error("ci.yml cannot be called by release.yml: no workflow_call trigger")
	}
	runsCI := false
	for _, j := range ci.Jobs {
		for _, s := range j.Steps {
			runsCI = runsCI || strings.Contains(s.Run, "bash .ci/run")
		}
	}
	if !runsCI {
		t.Error("ci.yml no longer runs .ci/run")
	}

	var testJob string
	for name, j := range rel.Jobs {
		if j.Uses == "./.github/workflows/ci.yml" {
			testJob = name
		}
	}
	if testJob == "" {
		t.Fatal("release.yml has no job that runs ci.yml")
	}
	if rel.Permissions["contents"] != "read" {
		t.Errorf("release.yml's default permissions: %v, want contents: read", rel.Permissions)
	}
	publishing := 0
	for name, j := range rel.Jobs {
		publishes := false
		for _, s := range j.Steps {
			publishes = publishes || strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") || strings.HasPrefix(s.Uses, "rajatjindal/krew-release-bot@")
		}
		if !publishes {
			continue
		}
		publishing++
		needs := []string{}
		switch n := j.Needs.(type) {
		case string:
			needs = append(needs, n)
		case []any:
			for _, x := range n {
				needs = append(needs, x.(string))
			}
		}
		// A job's `if: always()` (or failure()) would run it after a
		// failed need; the default success() does not.
		if !slices.Contains(needs, testJob) || strings.Contains(j.If, "always()") || strings.Contains(j.If, "failure()") {
			t.Errorf("release.yml's %s publishes without waiting for %s to pass (needs %v, if %q)", name, testJob, needs, j.If)
		}
		if j.Permissions["contents"] != "write" {
			t.Errorf("%s: permissions %v", name, j.Permissions)
		}
	}
	if publishing == 0 {
		t.Error("release.yml publishes nothing")
	}
}

// What goreleaser publishes: pre-release tags as pre-releases, notes
// grouped from the commits, and the archives with the k9s plugins file.
func TestGoreleaserConfig(t *testing.T) {
	var g struct {
		Changelog struct {
			Disable any    `json:"disable"`
			Use     string `json:"use"`
			Groups  []struct {
				Title  string `json:"title"`
				Regexp string `json:"regexp"`
			} `json:"groups"`
		} `json:"changelog"`
		Release struct {
			Prerelease string `json:"prerelease"`
		} `json:"release"`
		Archives []struct {
			Files []struct {
				Src string `json:"src"`
			} `json:"files"`
		} `json:"archives"`
		Krews []struct {
			Caveats string `json:"caveats"`
		} `json:"krews"`
	}
	readYAML(t, ".goreleaser.yaml", &g)
	if g.Release.Prerelease != "auto" {
		t.Errorf("release.prerelease %q: a v0.2.0-rc.1 tag would become the latest release", g.Release.Prerelease)
	}
	if g.Changelog.Disable != nil && g.Changelog.Disable != false {
		t.Errorf("changelog.disable %v", g.Changelog.Disable)
	}
	if len(g.Changelog.Groups) < 2 {
		t.Errorf("changelog groups: %+v", g.Changelog.Groups)
	}
	// The groups sort this repository's commit subjects by their area.
	for subject, title := range map[string]string{
		"locks --older-than/--exit-code: unit tests":    "Commands",
		"0a1b2c3 unlock example: the live-runner":       "Commands",
		"k9s: a locks overview":                         "k9s",
		"README: krew install first":                    "Documentation",
		"docs/locks.md: the requests as they are now":   "Documentation",
		"release: wait for CI":                          "Release and CI",
		"e2e: locks --older-than --exit-code":           "Tests",
		"TestHelpExamples: check each example's effect": "Tests",
		"JSON list splitter: one prefix per error":      "Other changes",
	} {
		got := "Other changes"
		for _, grp := range g.Changelog.Groups {
			if grp.Regexp != "" && regexp.MustCompile(grp.Regexp).MatchString(subject) {
				got = grp.Title
				break
			}
		}
		if got != title {
			t.Errorf("%q goes to %q, want %q", subject, got, title)
		}
	}
	for _, a := range g.Archives {
		if !slices.ContainsFunc(a.Files, func(f struct {
			Src string `json:"src"`
		}) bool {
			return f.Src == "docs/k9s/captf.yaml"
		}) {
			t.Errorf("an archive without docs/k9s/captf.yaml: %+v", a.Files)
		}
	}
	for _, k := range g.Krews {
		if strings.Contains(k.Caveats, "cp ~/.krew") || !strings.Contains(k.Caveats, `"${KREW_ROOT:-$HOME/.krew}"`) {
			t.Errorf("the krew caveat ignores KREW_ROOT:\n%s", k.Caveats)
		}
	}
}

// A pull request from a branch of the repository runs CI once, as the
// branch's push; one from a fork, which pushes nowhere here, runs it as
// the pull request.
func TestCIRunsOncePerPullRequest(t *testing.T) {
	var ci workflow
	readYAML(t, ".github/workflows/ci.yml", &ci)
	for _, on := range []string{"push", "pull_request"} {
		if _, ok := ci.On[on]; !ok {
			t.Errorf("ci.yml does not run on %s", on)
		}
	}
	for name, j := range ci.Jobs {
		if !strings.Contains(j.If, "github.event_name != 'pull_request'") || !strings.Contains(j.If, "github.event.pull_request.head.repo.full_name != github.repository") {
			t.Errorf("ci.yml's %s runs twice for a pull request from a branch of the repository (if %q)", name, j.If)
		}
	}
}

// krew-release-bot is v0.0.51, pinned to its commit as every action is,
// and Dependabot proposes the updates of the actions and the Go modules.
func TestActionsPinnedAndUpdated(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`uses: rajatjindal/krew-release-bot@[0-9a-f]{40} # v0\.0\.51\n`).Match(b) {
		t.Error("release.yml does not pin krew-release-bot v0.0.51 by commit")
	}
	var dep struct {
		Updates []struct {
			Ecosystem string `json:"package-ecosystem"`
			Directory string `json:"directory"`
		} `json:"updates"`
	}
	readYAML(t, ".github/dependabot.yml", &dep)
	seen := map[string]bool{}
	for _, u := range dep.Updates {
		seen[u.Ecosystem+" "+u.Directory] = true
	}
	for _, want := range []string{"github-actions /", "gomod /"} {
		if !seen[want] {
			t.Errorf(".github/dependabot.yml has no %s update (has %v)", want, seen)
		}
	}
}
