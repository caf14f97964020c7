// Package testtmp keeps a test binary's temporary files out of /tmp. A
// harness confined in namespaces of its own sees its session's tmp on
// /tmp (the real /tmp hidden but for the paths the run needs), so a test
// whose stand-in harness reads an action file from t.TempDir() under
// /tmp would find nothing. Tests that run confined harnesses call
// Outside from TestMain, as a user's files live outside /tmp.
package testtmp

import "os"

// Outside points TMPDIR at a new directory under /var/tmp when the system
// has it (t.TempDir and os.MkdirTemp then make theirs there), and returns
// the function that removes it, to call when the tests have run.
func Outside() (cleanup func()) {
	if fi, err := os.Stat("/var/tmp"); err != nil || !fi.IsDir() {
		return func() {}
	}
	dir, err := os.MkdirTemp("/var/tmp", "workforce-test-")
	if err != nil {
		return func() {}
	}
	os.Setenv("TMPDIR", dir)
	return func() { os.RemoveAll(dir) }
}
