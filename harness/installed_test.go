package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstInstalled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		installed []string
		prefer    []string
		want      string
	}{
		{"the preferred one", []string{"claude", "codex"}, []string{"codex"}, "codex"},
		{"claude first", []string{"claude", "opencode", "codex", "gemini"}, nil, "claude"},
		{"opencode when claude is missing", []string{"opencode", "codex"}, []string{"claude"}, "opencode"},
		{"the preferred one missing", []string{"gemini", "codex"}, []string{"opencode"}, "codex"},
		{"gemini last", []string{"gemini"}, []string{""}, "gemini"},
		{"none", nil, []string{"claude"}, ""},
		// A file that is not executable is not installed.
		{"not executable", []string{"-claude"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, h := range tc.installed {
				mode := os.FileMode(0o755)
				if name, ok := strings.CutPrefix(h, "-"); ok {
					h, mode = name, 0o644
				}
				if err := os.WriteFile(filepath.Join(dir, h), []byte("#!/bin/sh\n"), mode); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FirstInstalled([]string{"PATH=" + dir}, tc.prefer...)
			if got != tc.want {
				t.Fatalf("FirstInstalled = %q, %v; want %q", got, err, tc.want)
			}
			if tc.want != "" {
				return
			}
			var ne *NoneInstalledError
			if !errors.As(err, &ne) {
				t.Fatalf("err = %v, want a *NoneInstalledError", err)
			}
			for _, s := range []string{"claude, opencode, codex, gemini", "@anthropic-ai/claude-code", "opencode-ai", "@openai/codex", "@google/gemini-cli"} {
				if !strings.Contains(err.Error()+" "+ne.Hint(), s) {
					t.Errorf("%q, %q does not name %s", err, ne.Hint(), s)
				}
			}
		})
	}
}
