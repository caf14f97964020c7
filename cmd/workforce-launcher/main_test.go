package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/confine"
)

// TestMain runs main when the test starts itself as the command.
func TestMain(m *testing.M) {
	if os.Getenv("WORKFORCE_LAUNCHER_TEST_MAIN") != "" {
		main()
	}
	os.Exit(m.Run())
}

// TestMainArgs: by hand, the command says it is workforce's and exits 2;
// with the launcher's argument it is the launcher (confine.Main), which
// refuses a message descriptor that is not one.
func TestMainArgs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"by hand", nil, 2, "workforce starts it to confine a harness; it is not run by hand"},
		{"another argument", []string{"--help"}, 2, "it is not run by hand"},
		{"as the launcher", []string{confine.LauncherArg, "x", "/bin/true", "true"}, confine.ExitCannotRun, `message descriptor "x": want a number from 3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), "WORKFORCE_LAUNCHER_TEST_MAIN=1")
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != tt.code || !strings.Contains(string(out), tt.want) {
				t.Errorf("exit %d, %q; want %d and %q", code, out, tt.code, tt.want)
			}
		})
	}
}
