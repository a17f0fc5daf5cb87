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

// Info is the version as `kubectl captf version -o json` prints it.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
}

// Get returns the build's version.
func Get() Info {
	return Info{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version()}
}
