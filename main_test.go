package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"workforce": main,
	})
}

// TestScript runs the command-line scripts in testdata/script. Set
// TESTSCRIPT_UPDATE=1 to rewrite the expected output in place.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("TESTSCRIPT_UPDATE") != "",
		Setup: func(env *testscript.Env) error {
			// Keep every script away from the real home directory.
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("AGENT_WORKFORCE_HOME", env.WorkDir+"/home/.agentworkforce/workforce")
			env.Setenv("PERSONAS", env.WorkDir+"/home/.agentworkforce/workforce/personas")
			// WORKFORCE_BIN holds the workforce command alone, for scripts that
			// need a PATH without anything else on it.
			env.Setenv("WORKFORCE_BIN", filepath.SplitList(env.Getenv("PATH"))[0])
			return os.MkdirAll(env.WorkDir+"/home", 0o755)
		},
	})
}
