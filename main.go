// Command workforce runs coding agents (Claude Code, opencode, Codex) with
// personas: it loads personas from a cascade of layers, packs and installs
// them, tells which instruction files each harness discovers, and runs a
// persona in a sandbox copy of the repository.
//
// Output rule: data goes to stdout; everything else goes to stderr prefixed
// with "workforce: error:", "workforce: warning:" or "workforce: hint:".
// Exit codes are the named constants in exitcode.go.
//
// main.go only wires the application together. Each command lives in its own
// cmd_*.go file and adds itself to the command list with register.
package main

import (
	"io"
	"os"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/urfave/cli/v2"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// commands is filled by the init functions of the cmd_*.go files.
var commands []*cli.Command

// register adds a command to the application.
func register(c *cli.Command) { commands = append(commands, c) }

func main() {
	// A command runs for milliseconds: collect garbage less often than the
	// default, unless GOGC says otherwise.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// newApp builds the command-line application writing to stdout and stderr.
func newApp(stdout, stderr io.Writer) *cli.App {
	cmds := append([]*cli.Command(nil), commands...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:                 "workforce",
		Usage:                "run coding agents with personas, in a sandbox",
		Version:              version,
		Commands:             cmds,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      false,
		ExitErrHandler:       func(*cli.Context, error) {}, // run reports errors itself
		OnUsageError:         onUsageError,
	}
}

// usageOnce guards setUsageErrors, which changes the registered commands
// every app shares.
var usageOnce sync.Once

// run executes the application and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	var unknown error
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown = unknownCommand(c, name)
	}
	// The help command is added when the app starts: Before sees it.
	app.Before = func(c *cli.Context) error {
		usageOnce.Do(func() { setUsageErrors(c.App.Commands) })
		return nil
	}
	err := app.Run(interspersed(app, args))
	if err == nil {
		err = unknown
	}
	return printError(stderr, err)
}
