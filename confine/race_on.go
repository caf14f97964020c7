//go:build race

package confine

// launcherEnv is the environment of the launcher and of the other
// processes workforce starts of itself (probes, CloseAside): none, but in
// a build with the race detector, whose runtime otherwise sleeps a second
// at every exit (GORACE's atexit_sleep_ms), which each run of the tests
// paid for every launcher, probe and close-aside process.
func launcherEnv() []string { return []string{"GORACE=atexit_sleep_ms=0"} }
