package main

import (
	"fmt"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/seed-3bc194a6/workforce/confine"
)

// TestConfineScript runs the scripts in testdata/confine: the workforce
// binary started as the launcher confines what it executes. They hold
// the condition [landlock], true when this kernel can confine.
func TestConfineScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/confine",
		UpdateScripts: false,
		Condition: func(cond string) (bool, error) {
			if cond == "landlock" {
				return confine.Available() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("HOME", env.WorkDir+"/home")
			return nil
		},
	})
}
