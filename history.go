package main

// This file is the history's flag of run and batch, and the warnings of
// a damaged history that usage and history print; package run writes a
// run's record (run.Run.Finish).

import (
	"fmt"
	"io"
	"os/exec"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/urfave/cli/v2"
)

// noHistoryFlag is --no-history, of run and batch.
var noHistoryFlag = &cli.BoolFlag{Name: "no-history", Usage: "do not record the run in <home>/history.jsonl (also: " + history.Env + "=0)"}

// withoutHistory passes --no-history to the workforce run of a batch's
// task when off: the task records itself otherwise, as any run.
func withoutHistory(cmd *exec.Cmd, off bool) {
	if off {
		cmd.Args = append(cmd.Args, "--"+noHistoryFlag.Name)
	}
}

// usageWarnings bounds the warnings printed about a damaged history.
const usageWarnings = 3

// readHistory reads the history of env's workforce home, warning on
// stderr of the lines it skips: history's and usage's start.
func readHistory(stderr io.Writer, env procEnv) (home string, recs []history.Record, err error) {
	if home, err = env.home(); err != nil {
		return "", nil, err
	}
	recs, warns, err := history.ReadAll(home)
	if err != nil {
		return "", nil, fmt.Errorf("cannot read the history: %w", err)
	}
	printHistoryWarnings(stderr, warns)
	return home, recs, nil
}

func printHistoryWarnings(w io.Writer, warns []history.Warning) {
	for i, h := range warns {
		if i == usageWarnings {
			warnf(w, "%d more lines of the history skipped", len(warns)-i)
			break
		}
		warnf(w, "%v", h)
	}
}
