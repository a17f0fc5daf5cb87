// Package version holds the build's version, set through -ldflags -X by the
// release build (see .goreleaser.yaml and the Makefile).
package version

import "runtime"

// Set at build time; these are the values of a plain `go build`.
var (
	Version = "v0.0.0-dev"
	Commit  = "unknown"
	Date    = "unknown"
)

// CAPTFRules is the CAPTF release line whose controller rules the verdicts
// follow: its source (internal/locks/stale.go, internal/jobs/name.go,
// internal/controllers/shared/) is the authority the plugin is tested
// against.
const CAPTFRules = "v0.1.x"

// Info is the version as `kubectl captf version -o json` prints it.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	// CAPTFRules is the CAPTF release whose rules the verdicts follow.
	CAPTFRules string `json:"captfRules"`
}

// Get returns the build's version.
func Get() Info {
	return Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(), CAPTFRules: CAPTFRules}
}
