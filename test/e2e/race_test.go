//go:build race

package e2e

// raceEnabled: the test binary was built with -race, so the plugin it runs
// is built with -race too, and the race detector watches both processes.
const raceEnabled = true
