//go:build !race

package confine

// launcherEnv is the environment of the launcher and of the other
// processes workforce starts of itself (probes, CloseAside): none.
func launcherEnv() []string { return []string{} }
