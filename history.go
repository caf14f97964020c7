package main

// This file is the history's flag of run and batch, and the warnings of
// a damaged history that usage and history print; package run writes a
// run's record (run.Run.Finish).

import (
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

func printHistoryWarnings(w io.Writer, warns []history.Warning) {
	for i, h := range warns {
		if i == usageWarnings {
			warnf(w, "%d more lines of the history skipped", len(warns)-i)
			break
		}
		warnf(w, "%v", h)
	}
}
