package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
)

// ResultsDir is the directory, under the workforce home, where each
// one-shot run leaves its result and the harness's raw output, by session
// id: they stay after the sandbox is removed.
const ResultsDir = "results"

// OneShotResult is what a one-shot run adds to its Result.
type OneShotResult struct {
	// Outcome is what the harness's output says; never nil.
	Outcome *harness.Outcome
	// Parsed says the output held a result (harness.ParseOutput did not
	// return harness.ErrNoResult).
	Parsed bool
	// Stdout and Stderr are the harness's raw output.
	Stdout, Stderr []byte
	// Dir is the session's results directory (Home/results/ID), holding
	// the raw output (stdout.json or stdout.jsonl, stderr.txt); the caller
	// writes result.json there. Empty when it could not be written (a
	// warning said why).
	Dir string
}

// runOneShot runs a one-shot plan: the harness gets inv.Stdin, never the
// terminal; its standard output is captured, not shown, and parsed; its
// standard error is shown and captured. Everything else is as in run.
func (p *Plan) runOneShot(o RunOptions) (*Result, error) {
	var stdout, stderr bytes.Buffer
	o.Stdin = strings.NewReader(p.inv.Stdin)
	o.Stdout = &stdout
	if o.Stderr != nil {
		o.Stderr = io.MultiWriter(o.Stderr, &stderr)
	} else {
		o.Stderr = &stderr
	}
	o.HarnessSession = func() string { return outputSessionID(p.Harness, stdout.Bytes()) }
	res, err := p.run(o)
	if res == nil {
		return nil, err
	}
	one := &OneShotResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	out, perr := harness.ParseOutput(p.Harness, one.Stdout)
	if out == nil {
		out = &harness.Outcome{}
	}
	one.Outcome, one.Parsed = out, perr == nil
	if perr != nil && !errors.Is(perr, harness.ErrNoResult) {
		return res, perr
	}
	dir := filepath.Join(p.mount.Home, ResultsDir, filepath.Base(p.Sandbox))
	if werr := saveOutput(dir, p.Harness, one); werr != nil {
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("cannot keep the harness's output: %v", werr))
		}
	} else {
		one.Dir = dir
	}
	res.OneShot = one
	return res, err
}

// saveOutput writes the harness's raw output into dir.
func saveOutput(dir, h string, one *OneShotResult) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	name := "stdout.jsonl"
	if h == persona.HarnessClaude {
		name = "stdout.json"
	}
	if err := os.WriteFile(filepath.Join(dir, name), one.Stdout, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "stderr.txt"), one.Stderr, 0o600)
}
