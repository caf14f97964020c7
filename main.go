// Command workforce runs coding agents (Claude Code, opencode, Codex,
// Gemini CLI) with personas: it loads personas from a cascade of layers, packs and installs
// them, tells which instruction files each harness discovers, and runs a
// persona in a sandbox copy of the repository.
//
// The command layer. main.go wires the application and lists its
// commands; each command lives in its own cmd_<name>.go as a function
// returning its *cli.Command (name, usage, description, flags), an
// options struct, an action that fills the options from the command line
// (flags, arguments, and what the process knows: working directory,
// workforce home, environment, terminals; ui.go) and a run<Name> function
// that does the work with the options and the streams it is given, so
// that a test calls it without parsing a command line. Command files are
// leaves (TestCommandFilesAreLeaves): each cmd_<name>.go and
// cmd_<name>_<sub>.go (sessions has one a subcommand) is an entry of
// commands() and uses no name of another command's files; what commands
// share is in files no command owns, which lean on none: output.go,
// ui.go, exitcode.go, catalog.go (also validate's check,
// which create runs), runs.go and runflags.go (running a persona, run's
// and sessions resume's flags), queueflags.go (the queue's flags of batch
// and worker), events.go, history.go, frontdoor.go (workforce alone: the
// picker). No function is over 80 lines but a command's definition.
// What needs neither a flag nor a stream goes to the package that owns
// it: pick's question and the reading of its answer are package pick's,
// a resumed run's own usage, an event's form and what a run kept in its
// results directory run's (OwnUsage, Event, ReadResult, ReadNetworkLog),
// create's target, --save-in-directory, staging directory and brief
// author's, a task's result without a run, batch --dry-run's plan and the
// default --jobs batch's (ResultOf, DryRun, Decisions, Jobs), the
// worker's signals, end line and git queue's (HandleSignals, Summary,
// GitWork), --since history's, the text of every report longer than a
// line report's (WriteText: report/text.go and listtext.go), list's
// selection and the lists of sources, export and import toreport's,
// finding and checking persona files and where an install lands
// persona's (FindFiles, FindAllFiles, Validate, ProjectTarget), import's
// pack native's (ImportPack), a lock's source install's (LockSource), a
// tarball's writing pack's (WriteFile), config.json's personaDirs
// internal/home's (EditDirs), --network-narrow's JSON netspec's.
// The run functions
// call the packages that own the ideas and print what they return:
// output.go holds what the commands share to print (the one JSON writer
// of documents, writeJSON, and the one of lines, writeJSONLine: no other
// file makes JSON, TestOneJSONWriter), report/ the JSON they
// print (package toreport converts), exitcode.go the exit statuses, the one
// place they are decided. Running a persona is package run's (run,
// create, pick --run, the picker and sessions resume go through it):
// runs.go makes its options and hooks from a command's and prints its
// outcome; exitcode.go maps the outcome and run's *Error to a status. Nothing else ends the process: os.Exit is
// called in this file only. The signals a command handles itself (batch,
// the queue's submitter, worker) come from notifyStop here, handed to
// the package the command calls. What is true of one harness (its
// one-shot mode, the arguments of a run without tools, what it counts
// from a conversation's start when resumed, where it keeps its
// conversations) is the harness tables' (package harness,
// internal/convstore), and the names of the files workforce keeps are
// their owners' (session, internal/home): main writes none of them.
//
// Output rule: data goes to stdout; everything else goes to stderr prefixed
// with "workforce: error:", "workforce: warning:" or "workforce: hint:".
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/buildinfo"
	"github.com/urfave/cli/v2"
)

// version may be set at build time with -ldflags "-X main.version=...";
// otherwise --version says what the Go toolchain stamped (buildinfo).
var version = "dev"

func main() {
	// workforce started by itself to confine a harness (confine.Start).
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	// A command runs for milliseconds: collect garbage less often than the
	// default, unless GOGC says otherwise.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(runApp(os.Args, os.Stdout, os.Stderr))
}

// exitOnSignal ends the process at once for a signal that asks it to (a
// second Ctrl-C during sync-back), with the signal's status; the session
// is left for workforce sessions sync to finish.
func exitOnSignal(sig os.Signal) { os.Exit(signalStatus(sig)) }

// notifyStop catches the signals that stop a command which handles them
// itself (Ctrl-C, SIGTERM, SIGHUP) until stop: the one source of signals
// the commands hand to the packages they call (batch.Signals), asked for
// at the moment they can handle one.
func notifyStop() (sigs <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 4)
	return ch, notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// notify is the one place workforce catches signals: it starts catching
// sigs on c until the stop it returns is called (session.Notify). The
// packages that handle signals (a run, a sync, the picker) get it from
// the command layer.
func notify(c chan<- os.Signal, sigs ...os.Signal) (stop func()) {
	signal.Notify(c, sigs...)
	return func() { signal.Stop(c) }
}

// commands returns the commands of workforce, in the order help lists
// them.
func commands() []*cli.Command {
	return []*cli.Command{
		batchCommand(),
		contextCommand(),
		evalCommand(),
		createCommand(),
		exportCommand(),
		harnessCommand(),
		historyCommand(),
		importCommand(),
		installCommand(),
		listCommand(),
		outdatedCommand(),
		packCommand(),
		pickCommand(),
		runCommand(),
		sessionsCommand(),
		showCommand(),
		sourcesCommand(),
		usageCommand(),
		validateCommand(),
		workerCommand(),
	}
}

// newApp builds the command-line application writing to stdout and stderr.
func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:                 "workforce",
		Usage:                "run coding agents with personas, in a sandbox",
		Description:          "Run with no arguments on a terminal, workforce opens a persona picker: the personas\nrun last first, type to filter, Tab to change the tier, Enter to run (docs/picker.md).",
		Version:              buildinfo.Version(version),
		Commands:             commands(),
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		HideHelpCommand:      false,
		ExitErrHandler:       func(*cli.Context, error) {}, // run reports errors itself
		OnUsageError:         onUsageError,
	}
}

// runApp executes the application and returns the process exit status.
func runApp(args []string, stdout, stderr io.Writer) int {
	if frontDoor(args, stdout) {
		// workforce alone on a terminal: the persona picker (frontdoor.go).
		return printError(stderr, runFrontDoor(context.Background(), frontDoorStreams(stdout, stderr), newProcEnv()))
	}
	app := newApp(stdout, stderr)
	var unknown error
	app.CommandNotFound = func(c *cli.Context, name string) {
		unknown = unknownCommand(c, name)
	}
	// The help command is added when the app starts: Before sees it.
	app.Before = func(c *cli.Context) error {
		setUsageErrors(c.App.Commands)
		return nil
	}
	err := app.Run(interspersed(app, args))
	if err == nil {
		err = unknown
	}
	return printError(stderr, err)
}
