package main

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The import rules of the packages, as go/build's deps_test.go holds the
// standard library's: this table is the authority on which package may
// import which (it starts from the package map of the design notes; where
// the code showed a better cut, the table changed and the package docs say
// why). Every package of the module must be listed. A rule names what a
// package must not reach, directly or through others: "W/x" is a package
// of this module and everything below it; any other path is a module
// outside (urfave/cli: only the command layer parses command lines).
const module = "github.com/seed-3bc194a6/workforce"

// anyOfOurs stands for every package of the module but those a rule
// allows by name.
const anyOfOurs = "W"

type depRule struct {
	// deny lists what the package must not reach.
	deny []string
	// allow, with deny holding anyOfOurs, lists the packages of the module
	// it may reach all the same.
	allow []string
}

var depRules = map[string]depRule{
	// Small shared concepts: nothing of workforce, or what is named.
	"W/internal/quote":       {deny: []string{anyOfOurs}},
	"W/internal/git":         {deny: []string{anyOfOurs}},
	"W/internal/diag":        {deny: []string{anyOfOurs}},
	"W/internal/frontmatter": {deny: []string{anyOfOurs}},
	"W/internal/npm":         {deny: []string{anyOfOurs}},
	"W/internal/pathutil":    {deny: []string{anyOfOurs}},
	"W/internal/lazyre":      {deny: []string{anyOfOurs}},
	"W/internal/buildinfo":   {deny: []string{anyOfOurs}},
	"W/internal/proctree":    {deny: []string{anyOfOurs}},
	"W/internal/home":        {deny: []string{anyOfOurs}, allow: []string{"W/internal/diag", "W/confine", "W/internal/netspec", "W/internal/pathutil", "W/internal/buildinfo"}},
	// The syntax of a network policy's words (modes, presets, HOST[:PORT]):
	// config.json, personas and batch files check them alike.
	"W/internal/netspec": {deny: []string{anyOfOurs}},
	// SKILL.md parsing, below both persona (which checks local skills at
	// load time) and skill (which imports mount and harness).
	"W/internal/skillmd":              {deny: []string{anyOfOurs}, allow: []string{"W/internal/frontmatter", "W/internal/pathutil"}},
	"W/internal/gittest":              {deny: []string{anyOfOurs}},
	"W/internal/syncbuf":              {deny: []string{anyOfOurs}},
	"W/internal/testtmp":              {deny: []string{anyOfOurs}},
	"W/internal/benchtree":            {deny: []string{anyOfOurs}},
	"W/internal/standin":              {deny: []string{anyOfOurs}},
	"W/internal/benchtree/mkpersonas": {deny: []string{anyOfOurs}, allow: []string{"W/internal/benchtree"}},
	"W/internal/convstore":            {deny: []string{anyOfOurs}}, // where each harness keeps its conversations: harness and history/sessions read it
	"W/internal/suggest":              {deny: []string{anyOfOurs}}, // the "did you mean" of a mistyped persona id or flag
	// The JSON the commands print: types of its own, so that the packages
	// below can change theirs freely; their text forms quote names
	// through internal/quote.
	"W/report": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/internal/quote"}},

	// The batch file, its state and the local pool's loop: a task runs as
	// a child workforce process, so batch needs the result and event types
	// only (package doc); the personas come in as a lookup function, and
	// names in errors go through internal/quote.
	"W/batch": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/report", "W/internal/proctree", "W/internal/quote", "W/internal/lazyre", "W/internal/netspec"}},
	// The evaluation of personas: case files, the matrix of attempts as
	// a batch's tasks, their judgement, the report and the comparison;
	// the personas come in as a lookup function (their hash included),
	// so nothing of the persona, session or run packages is reached.
	"W/eval": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/batch", "W/report", "W/internal/proctree", "W/internal/quote", "W/internal/lazyre", "W/internal/netspec"}},
	// The queue (NATS JetStream): the transport, the worker's loop around
	// batch's runner, the submitter's protocol over batch's state; the
	// worker's git comes in as functions (gitwork's, queue.GitWork), the
	// submitter resolves refs with gitwork.ResolveRef, and a
	// task runs as a child workforce, as in batch.
	"W/queue": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/batch", "W/report", "W/gitwork", "W/internal/git", "W/internal/quote", "W/internal/proctree", "W/internal/lazyre", "W/internal/netspec"}},

	// What a queue task does with git: the system git through
	// internal/git, and names printed through internal/quote.
	"W/gitwork": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/internal/git", "W/internal/quote", "W/internal/lazyre"}},

	"W/persona":          {deny: []string{"W/discover", "W/mount", "W/harness", "W/session", "W/skill", "W/native", "W/pack", "W/install", cliLib}},
	"W/personas":         {deny: []string{"W/discover", "W/mount", "W/harness", "W/session", cliLib}},
	"W/internal/catalog": {deny: []string{"W/discover", "W/mount", "W/harness", "W/session", cliLib}},
	"W/generate":         {deny: []string{"W/discover", "W/mount", "W/harness", "W/session", cliLib}},
	"W/discover":         {deny: []string{"W/persona", "W/mount", "W/session", "W/harness", cliLib}},
	// harness imports confine: Start starts a harness confined when its
	// invocation carries a policy.
	"W/harness":                     {deny: []string{"W/mount", "W/session", cliLib}},
	"W/harness/internal/harnessdoc": {deny: []string{"W/mount", "W/session", cliLib}},
	"W/mount":                       {deny: []string{"W/discover", "W/harness", "W/persona", "W/session", "W/skill", cliLib}},
	"W/skill":                       {deny: []string{"W/session", cliLib}},
	"W/native":                      {deny: []string{"W/session", "W/mount", cliLib}},
	"W/pack":                        {deny: []string{"W/session", "W/mount", "W/install", cliLib}},
	"W/install":                     {deny: []string{"W/session", "W/mount", "W/harness", "W/native", cliLib}},
	"W/session":                     {deny: []string{cliLib, "W/report"}},
	// The record of runs: what a run ended with, in report's types; the
	// command layer fills it, so nothing of a run's making is reached.
	// Its usage totals match runs to the harnesses' own records
	// (history/sessions); where those are the caller says.
	"W/history": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/report", "W/internal/quote", "W/history/sessions", "W/internal/convstore"}},
	// The terminal picker: a TUI over the items it is given; it returns a
	// choice and runs nothing.
	"W/picker": {deny: []string{anyOfOurs, cliLib}},
	// pick's question and its answer: the candidates, the prompts, the
	// persona of the call and the strict reading of the answer, from the
	// personas it is given; asking is run's (run.Ask), printing main's.
	"W/pick": {deny: []string{cliLib, "W/run", "W/session", "W/harness", "W/mount", "W/discover", "W/install", "W/history"}},
	// The live display of a batch: it draws rows from the tasks' starts,
	// events (report's type) and ends it is given, and runs nothing: no
	// session, no batch runner, no command line.
	"W/batchview": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/report", "W/internal/quote"}},
	// The harnesses' own session records: the standard library, a
	// SQLite library and the table of where the stores are
	// (internal/convstore) only, so that any package, session's cleanup
	// included, may read them.
	"W/history/sessions": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/internal/convstore"}},
	// Landlock and the launcher: the standard library, x/sys, x/net/bpf
	// (the seccomp filter's assembler), go-landlock and two leaves,
	// internal/pathutil (its symlink resolver) and internal/buildinfo
	// (what says workforce-launcher is of workforce's build) only, since
	// every harness start runs it before main.
	"W/confine": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/internal/pathutil", "W/internal/buildinfo"}},
	// The launcher's own executable (make build puts it beside
	// workforce): confine alone, so that it starts in a millisecond.
	"W/cmd/workforce-launcher": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/confine", "W/internal/pathutil", "W/internal/buildinfo"}},
	// Running a persona for any caller (run, create, pick --run, the
	// picker, sessions resume): the domain packages it drives (persona,
	// the built-in catalog personas, session, harness, discover, mount,
	// confine, skill, install, history, report, internal/*); never the
	// command line, nor the workflows that run it as a child process
	// (batch, queue, the worker's git) or a display.
	"W/run": {deny: []string{cliLib, "W/batch", "W/queue", "W/gitwork", "W/batchview", "W/picker", "W/generate", "W/native"}},
	// What create prepares around the persona author's run: the target,
	// the staging directory, the brief; it runs nothing (run's), and the
	// project layer of cwd comes in as a function from the command layer.
	"W/author": {deny: []string{anyOfOurs, cliLib}, allow: []string{"W/internal/home", "W/internal/pathutil", "W/internal/buildinfo", "W/internal/lazyre", "W/internal/quote", "W/internal/diag", "W/confine", "W/internal/netspec"}},
	// The conversions of what the domain packages compute into report's
	// types, for the commands to print: the packages it reads (run for
	// sync-back's report), never the command line nor the workflows.
	"W/toreport": {deny: []string{cliLib, "W/batch", "W/queue", "W/gitwork", "W/batchview", "W/picker", "W/generate"}},
	// The proxy outside the namespace: the policy, the record of
	// connections, the API-key brokers; the caller (unconfined) passes it
	// the harness's hosts and keys, so it reaches no run, session,
	// harness, persona, mount or confine (nor main, which Go forbids).
	"W/egress": {deny: []string{"W/session", "W/harness", "W/run", "W/mount", "W/confine", "W/persona", cliLib}},
	// The command layer may import everything.
	"W": {},
}

// cliLib is the command-line library: only package main uses it.
const cliLib = "github.com/urfave/cli"

// TestImportRules fails when an import arrow goes the wrong way, or a
// package of the module is missing from depRules.
func TestImportRules(t *testing.T) {
	graph := moduleImports(t)
	for pkg := range graph {
		if _, ok := depRules[pkg]; !ok {
			t.Errorf("package %s is not in depRules: add it with what it must not import", pkg)
		}
	}
	for pkg, rule := range depRules {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("depRules lists %s, which is not a package of the module", pkg)
			continue
		}
		for _, path := range reach(graph, pkg) {
			if denied(rule, path) {
				t.Errorf("%s imports %s (through %s), which its rule forbids", pkg, path[len(path)-1], strings.Join(path, " -> "))
			}
		}
	}
}

// denied reports whether the last package of path breaks rule.
func denied(rule depRule, path []string) bool {
	p := path[len(path)-1]
	for _, d := range rule.deny {
		switch {
		case d == anyOfOurs:
			if (p == "W" || strings.HasPrefix(p, "W/")) && !slices.Contains(rule.allow, p) {
				return true
			}
		case p == d || strings.HasPrefix(p, d+"/"):
			return true
		}
	}
	return false
}

// reach returns, for every package pkg reaches, one import path leading
// to it (pkg first), in a stable order.
func reach(graph map[string][]string, pkg string) [][]string {
	seen := map[string]bool{pkg: true}
	var out [][]string
	queue := [][]string{{pkg}}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		for _, imp := range graph[path[len(path)-1]] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			next := append(append([]string(nil), path...), imp)
			out = append(out, next)
			queue = append(queue, next)
		}
	}
	return out
}

// moduleImports returns the imports of every package of the module
// (without tests), the module's own paths written "W/...": those of other
// modules are kept when they are the command-line library, the edges the
// rules look at, and not followed.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		key := "W"
		if path != "." {
			key = "W/" + filepath.ToSlash(path)
		}
		var imps []string
		for _, imp := range p.Imports {
			switch {
			case imp == module:
				imps = append(imps, "W")
			case strings.HasPrefix(imp, module+"/"):
				imps = append(imps, "W/"+strings.TrimPrefix(imp, module+"/"))
			case imp == cliLib || strings.HasPrefix(imp, cliLib+"/"):
				imps = append(imps, cliLib)
			}
		}
		sort.Strings(imps)
		graph[key] = slices.Compact(imps)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("go.mod"); err != nil || len(graph) < 10 {
		t.Fatalf("found %d packages: the test must run in the module's root", len(graph))
	}
	return graph
}
