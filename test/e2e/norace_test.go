//go:build !race

package e2e

// raceEnabled: the test binary was built without -race; so is the plugin.
const raceEnabled = false
