package main

// The front door: `workforce` with no arguments on a terminal opens the
// persona picker (package picker), then runs the persona picked as
// `workforce run PERSONA@TIER --input NAME=VALUE...` would, interactively,
// in the working directory, with the inputs the picker asked for. A tier
// whose harness is not on PATH is marked and cannot be picked.
// docs/picker.md says how it behaves.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/picker"
)

// recentAsked is how many recent personas are read from the history: the
// picker shows the first picker.RecentCount of them that still exist.
const recentAsked = 20

// maxHistoryWarnings bounds the warnings printed about a damaged history.
const maxHistoryWarnings = 3

// frontDoor reports whether a command line of args opens the picker: no
// arguments, standard input and stdout terminals of a type that can draw
// it. Otherwise `workforce` alone prints its usage.
func frontDoor(args []string, stdout io.Writer) bool {
	return len(args) == 1 && isTerminal(os.Stdin) && isTerminal(stdout) && drawingTerminal(os.Getenv("TERM"))
}

// drawingTerminal reports whether a terminal of type term can draw the
// picker: not "dumb" (an editor's shell buffer, which cannot place the
// cursor), nor of no type at all.
func drawingTerminal(term string) bool {
	return term != "" && term != "dumb"
}

// frontDoorStreams are the streams of the picker and the run it starts:
// the process's terminal.
func frontDoorStreams(stdout, stderr io.Writer) *iostreams {
	return &iostreams{In: os.Stdin, Out: stdout, Err: stderr, InTTY: true, OutTTY: true, ErrTTY: isTerminal(stderr), TTY: openTerminal}
}

// runFrontDoor opens the picker and runs what is picked. Esc quits with
// status 0, Ctrl-C with 130, a signal n from elsewhere with 128+n.
func runFrontDoor(ctx context.Context, ios *iostreams, env procEnv) error {
	cat, err := loadCatalog(env)
	if err != nil {
		return err
	}
	printDiagnostics(ios.Err, cat)
	if len(cat.Personas) == 0 {
		return withCode(exitFailure, errors.New("no personas to pick from"), "workforce install SOURCE adds some")
	}
	var recent []string
	if home, err := env.home(); err == nil {
		recent = recentPersonas(ios.Err, home)
	}
	choice, err := picker.Run(ctx, picker.Options{Items: pickerItems(cat, env), Recent: recent, In: ios.In, Out: ios.Out, Environ: env.Environ, Signals: notify})
	var sig *picker.SignalError
	switch {
	case errors.Is(err, picker.ErrQuit):
		return nil
	case errors.Is(err, picker.ErrInterrupted):
		return silentExit(exitInterrupted)
	case errors.As(err, &sig):
		return silentExit(signalStatus(sig.Signal))
	case err != nil:
		return fmt.Errorf("the picker failed: %w", err)
	}
	opts, argv := pickedRun(choice, env)
	fmt.Fprintf(ios.Err, "workforce: %s\n", shellJoin(argv))
	return runPersona(ctx, ios, opts)
}

// pickedRun is the run of what the picker returned, and the command line
// that runs the same.
func pickedRun(choice picker.Choice, env procEnv) (runOptions, []string) {
	ref := choice.ID
	if choice.Tier != "" {
		ref += "@" + choice.Tier
	}
	argv := []string{"workforce", "run", ref}
	inputs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(choice.Inputs)) {
		inputs[name] = choice.Inputs[name]
		argv = append(argv, "--input", name+"="+choice.Inputs[name])
	}
	return runOptions{Ref: ref, Inputs: inputs, Env: env}, argv
}

// recentPersonas are the ids of the personas run lately, newest first,
// from the history of home; its damaged lines are warned about (a few),
// and a history that cannot be read gives none.
func recentPersonas(stderr io.Writer, home string) []string {
	ids, warns, err := history.Recent(home, recentAsked)
	for i, w := range warns {
		if i == maxHistoryWarnings {
			warnf(stderr, "%d more lines of the history skipped", len(warns)-i)
			break
		}
		warnf(stderr, "%v", w)
	}
	if err != nil {
		warnf(stderr, "cannot read the history: %v", err)
	}
	return ids
}

// pickerItems are the personas of cat as the picker shows them: their
// source layer; each tier with its harness and model (a flat persona's
// one runtime once, as its default tier), and whether its harness is
// on the PATH of env; the inputs to ask for, those a run without
// --input in env would miss.
func pickerItems(cat *persona.Catalog, env procEnv) []picker.Item {
	items := make([]picker.Item, 0, len(cat.Personas))
	for _, p := range cat.Personas {
		s := p.Spec
		it := picker.Item{ID: p.ID, Intent: s.Intent, Description: s.Description, Tags: s.Tags, Source: p.Layer}
		for _, name := range s.MissingInputs(env.getenv) {
			it.Inputs = append(it.Inputs, picker.Input{Name: name, Description: s.Inputs[name].Description})
		}
		def := s.EffectiveDefaultTier()
		names := s.TierNames()
		if s.Flat() && def != "" {
			names = []string{def}
		}
		for _, name := range names {
			rt := s.TierRuntime(name)
			if rt == nil {
				continue
			}
			if name == def {
				it.Default = len(it.Tiers)
			}
			it.Tiers = append(it.Tiers, picker.Tier{Name: name, Harness: rt.Harness, Model: rt.Model, Missing: missingHarness(rt.Harness, env)})
		}
		items = append(items, it)
	}
	return items
}

// missingHarness says why harness h cannot start in env, and how to
// install it: "" when it is on PATH.
func missingHarness(h string, env procEnv) string {
	if _, err := harness.LookPath(h, env.Environ); err == nil {
		return ""
	}
	if pkg := harness.Packages[h]; pkg != "" {
		return fmt.Sprintf("%s is not installed: npm install -g %s", h, pkg)
	}
	return h + " is not installed (not found on PATH)"
}
