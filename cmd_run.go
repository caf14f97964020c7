package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "run",
		Usage:     "run a persona's harness in a sandbox copy of the project",
		ArgsUsage: "PERSONA[@TIER] [-- HARNESS-ARGS...]",
		Description: `Copies the project (the nearest directory with .git above the working
directory, else the working directory) to <home>/sessions/, writes the
persona's CLAUDE.md (claude) or AGENTS.md (opencode, codex) into the sandbox
directory matching the working directory, hides the repository's own
instruction files of that harness (in extend mode their text, as the harness
would load it in your directory, is folded in before the persona's), starts the harness
there, and after it exits syncs new and changed files back. Files changed in
the repository meanwhile are conflicts: the repository's version stays, the
agent's is kept under the session directory. Deletions are applied only with
--sync-deletes. Arguments after -- go to the harness.

Exit status: the harness's (128+signal when killed, 127 when not installed);
when the harness succeeded but sync-back found conflicts, 3.

Example:

   workforce run code-reviewer@best --harness opencode --dry-run
   workforce run test-writer --input TARGET=./pkg/parser -- --verbose`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "run on this harness instead of the tier's: claude, opencode or codex"},
			&cli.StringFlag{Name: "root", Usage: "the project root to copy (default: the nearest directory with .git, else the working directory); it must contain the working directory"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input value, NAME=VALUE (repeatable)"},
			&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the sandbox after the run"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan without creating or starting anything"},
			&cli.BoolFlag{Name: "json", Usage: "with --dry-run, print the plan as JSON"},
			&cli.BoolFlag{Name: "install-in-repo", Usage: "run in the repository itself, without a sandbox (the sidecar is skipped)"},
			profileFlagDef,
		},
		Action: runAction,
	})
}

// materialized is the instruction file written into the sandbox.
type materialized struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Text string `json:"text"`
}

// runPlan is what `workforce run --dry-run` prints.
type runPlan struct {
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// HarnessVersion is the installed harness's version, when known;
	// Profile the discovery profile that decides which instruction files
	// are hidden and folded.
	HarnessVersion string            `json:"harnessVersion,omitempty"`
	Profile        string            `json:"profile,omitempty"`
	Layers         []persona.Origin  `json:"layers"`
	Resolved       *persona.Resolved `json:"resolved"`
	Root           string            `json:"root"`
	Cwd            string            `json:"cwd"`
	Sandbox        string            `json:"sandbox"`
	Workdir        string            `json:"workdir"`
	Materialized   *materialized     `json:"materialized"`
	Extend         *mount.Extend     `json:"extend,omitempty"`
	Hidden         []string          `json:"hidden"`
	Ignored        []string          `json:"ignored"`
	Readonly       []string          `json:"readonly"`
	Argv           []string          `json:"argv"`
	Env            []string          `json:"env"`
	Sealed         []mount.SealedVar `json:"sealedEnv"`
	ConfigFiles    map[string]string `json:"configFiles,omitempty"`
	Notes          []string          `json:"notes,omitempty"`
	InRepo         bool              `json:"installInRepo"`
}

func runAction(c *cli.Context) error {
	args := c.Args().Slice()
	var extra []string
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	if len(args) != 1 {
		return usagef("run takes one persona, as PERSONA or PERSONA@TIER, then optionally -- and harness arguments")
	}
	if c.Bool("json") && !c.Bool("dry-run") {
		return usageError(errors.New("--json goes with --dry-run"), "use --dry-run --json to print the plan as JSON")
	}
	if c.Bool("install-in-repo") && c.Bool("keep") {
		return usageError(errors.New("--install-in-repo and --keep conflict: there is no sandbox to keep"))
	}
	if c.Bool("install-in-repo") && c.Bool("sync-deletes") {
		return usageError(errors.New("--install-in-repo and --sync-deletes conflict: nothing is synced without a sandbox"))
	}
	explicit := map[string]string{}
	for _, kv := range c.StringSlice("input") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--input %q: want NAME=VALUE", kv)
		}
		explicit[k] = v
	}
	if h := c.String("harness"); h != "" && !persona.IsHarness(h) {
		return usageError(fmt.Errorf("unknown harness %q", h), "--harness takes one of "+strings.Join(persona.Harnesses, ", "))
	}

	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	p, r, err := lookup(cat, args[0])
	if err != nil {
		printDiagnostics(c.App.ErrWriter, cat)
		return err
	}
	for _, w := range personaDiagnostics(cat, p) {
		warnf(c.App.ErrWriter, "%s", w)
	}
	if h := c.String("harness"); h != "" {
		r.Harness = h
	}
	values, err := r.ResolveInputs(explicit, os.Getenv)
	if err != nil {
		return err
	}
	r.SystemPrompt = persona.Substitute(r.SystemPrompt, values)

	home, err := persona.Home()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	cwd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return err
	}
	root := mount.ProjectRoot(cwd, persona.DefaultRootMarkers)
	if dir := c.String("root"); dir != "" {
		if root, err = filepath.Abs(dir); err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return fmt.Errorf("--root %s: %w", dir, err)
		}
		if rel, err := filepath.Rel(root, cwd); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return usageError(fmt.Errorf("--root %s does not contain the working directory %s", dir, cwd))
		}
	}
	plan := &runPlan{Persona: p.ID, Tier: r.Tier, Harness: r.Harness, Layers: p.Chain, Resolved: r,
		Root: root, Cwd: cwd, InRepo: c.Bool("install-in-repo"),
		Hidden: []string{}, Ignored: []string{}, Readonly: []string{}}
	sessionDir := mount.NewSessionDir(home, p.ID)
	plan.Sandbox = sessionDir

	sc := r.Sidecar(persona.ChannelFor(r.Harness))
	var text string
	if sc.IsSet() {
		if text, err = sc.Text(); err != nil {
			return err
		}
		text = persona.Substitute(text, values)
	}
	mopts := mount.Options{Home: home, Persona: p.ID, Root: root, Cwd: cwd, Dir: sessionDir,
		Ignore: r.Mount.IgnoredPatterns, Readonly: r.Mount.ReadonlyPatterns}
	workRel, _ := filepath.Rel(root, cwd)
	plan.Workdir = filepath.Join(sessionDir, mount.TreeDir, workRel)
	switch {
	case plan.InRepo:
		plan.Workdir = cwd
		if sc.IsSet() {
			warnf(c.App.ErrWriter, "--install-in-repo: the persona's %s is skipped; nothing is written into the repository", sc.Channel.FileName())
		}
	case sc.IsSet():
		prof, version, err := harnessProfile(c, r.Harness)
		if err != nil {
			return err
		}
		plan.Profile, plan.HarnessVersion = prof.Name, version
		name := sc.Channel.FileName()
		if sc.Mode == persona.ModeExtend {
			// Only what is folded is hidden; nested files stay for the
			// harness to load on demand.
			tree := filepath.Join(sessionDir, mount.TreeDir)
			ext, err := mount.PlanExtend(prof, mopts, tree, name, text, discover.FromEnv(prof, os.Getenv))
			if err != nil {
				return err
			}
			plan.Extend = ext
			mopts.HidePaths = ext.Hide
			text = ext.Text
			for _, f := range ext.Extra {
				warnf(c.App.ErrWriter, "extend: %s loads %s from above the sandbox, which your directory would not give; set %s to a directory without instruction files above it", r.Harness, f, persona.HomeEnv)
			}
			if prof.MaxBytes > 0 && len(text) > prof.MaxBytes {
				warnf(c.App.ErrWriter, "extend: the instructions and the persona are %d bytes, over %s's budget of %d; the end of the persona's text will be cut", len(text), r.Harness, prof.MaxBytes)
			}
		} else {
			// Overwrite: the harness sees none of the repository's
			// instruction files of its convention.
			mopts.Hide = prof.HiddenNames()
		}
		plan.Materialized = &materialized{Path: filepath.Join(plan.Workdir, name), Mode: string(sc.Mode), Text: text}
	}

	hopts := harness.Options{Extra: extra, ConfigDir: filepath.Join(sessionDir, mount.ConfigDir), Env: os.Environ()}
	if !plan.InRepo {
		// No path of the real project reaches the harness.
		hopts.Seal = func(env []string) []string {
			env, plan.Sealed = mount.SealEnv(env, root, filepath.Join(sessionDir, mount.TreeDir))
			return env
		}
	}
	inv, err := harness.Plan(r, hopts)
	if err != nil {
		return err
	}
	plan.Argv, plan.ConfigFiles, plan.Notes = inv.Argv(), inv.Files, inv.Notes
	// The harness starts with PWD naming its directory (harness.Run).
	plan.Env = append(append([]string{}, inv.SetEnv...), "PWD="+plan.Workdir)
	if plan.Sealed == nil {
		plan.Sealed = []mount.SealedVar{}
	}

	if c.Bool("dry-run") {
		if !plan.InRepo {
			mp, err := mount.PlanFor(mopts)
			if err != nil {
				return err
			}
			plan.Hidden, plan.Ignored, plan.Readonly = mp.Hidden, mp.Ignored, mp.Readonly
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, plan)
		}
		return printPlan(c.App.Writer, plan)
	}
	for _, n := range inv.Notes {
		warnf(c.App.ErrWriter, "%s", n)
	}
	if _, err := harness.LookPath(inv.Binary, inv.Env()); err != nil {
		return harnessMissing(err)
	}
	if plan.InRepo {
		return runInRepo(c, inv, cwd, sessionDir)
	}
	return runSandboxed(c, inv, mopts, plan)
}

func harnessMissing(err error) error {
	var nf *harness.NotFoundError
	if errors.As(err, &nf) {
		return withCode(exitHarnessMissing, err, nf.Hint())
	}
	return err
}

func runInRepo(c *cli.Context, inv *harness.Invocation, cwd, sessionDir string) error {
	if len(inv.Files) > 0 {
		if err := inv.WriteFiles(); err != nil {
			return err
		}
		defer os.RemoveAll(sessionDir)
	}
	code, err := harness.Run(context.Background(), inv, cwd, os.Stdin, c.App.Writer, c.App.ErrWriter)
	if err != nil {
		return harnessMissing(err)
	}
	return silentExit(code)
}

func runSandboxed(c *cli.Context, inv *harness.Invocation, mopts mount.Options, plan *runPlan) error {
	stderr := c.App.ErrWriter
	warnStale(stderr, mopts.Home, plan.Root)
	o := session.Options{
		Dir: plan.Sandbox, Persona: plan.Persona, Tier: plan.Tier, Harness: plan.Harness,
		Mount: mopts, Invocation: inv,
		Stdin: os.Stdin, Stdout: c.App.Writer, Stderr: stderr,
		SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"),
		Warn: func(msg string) { warnf(stderr, "%s", msg) },
	}
	if m := plan.Materialized; m != nil {
		o.Materialize = &session.File{Name: filepath.Base(m.Path), Text: m.Text}
	}
	syncing := false
	if isTerminal(stderr) {
		// Progress, on terminals only.
		o.Progress = func(event, detail string) {
			switch event {
			case "copy":
				fmt.Fprintf(stderr, "workforce: copying %s into %s\n", detail, plan.Sandbox)
			case "sync":
				syncing = true
				fmt.Fprintf(stderr, "\rworkforce: syncing %s\033[K", detail)
			}
		}
	}
	res, err := session.Run(o)
	if syncing {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if res != nil && res.Kept {
			warnf(stderr, "the session is kept at %s; workforce sessions sync %s finishes it", res.Session.Dir, res.Session.Record.ID)
		}
		return harnessMissing(err)
	}
	if res.Report != nil {
		printReport(c.App.Writer, stderr, res.Report)
		if res.Report.Interrupted {
			hintf(stderr, "workforce sessions sync %s finishes it", res.Session.Record.ID)
		}
	}
	if res.Kept {
		fmt.Fprintf(c.App.Writer, "sandbox kept: %s\n", res.Session.Dir)
	}
	return silentExit(res.ExitCode)
}

// warnStale warns of the sessions of root left by a process that died.
func warnStale(stderr io.Writer, home, root string) {
	infos, err := session.List(home)
	if err != nil {
		return
	}
	for _, in := range infos {
		if in.Stale && in.Session.Record.Root == root {
			warnf(stderr, "session %s of this project was left %s by a process that is gone; workforce sessions sync %s brings its work back", in.ID(), in.Session.Record.Phase, in.ID())
		}
	}
}

func printReport(w, stderr io.Writer, r *mount.Report) {
	printEach(w, "created", r.Created)
	printEach(w, "updated", r.Updated)
	printEach(w, "deleted", r.Deleted)
	printEach(w, "deleted in the sandbox, kept", r.Unapplied)
	if len(r.Unapplied) > 0 {
		hintf(stderr, "run with --sync-deletes to apply deletions")
	}
	printEach(w, "not synced", r.NotSynced)
	for _, cf := range r.Conflicts {
		if cf.Saved == "" {
			fmt.Fprintf(w, "conflict: %s was deleted by the agent but changed in the repository; kept: %s\n", cf.Path, cf.Real)
			continue
		}
		fmt.Fprintf(w, "conflict: %s changed in the repository too; yours: %s; the agent's: %s\n", cf.Path, cf.Real, cf.Saved)
	}
	if r.Interrupted {
		warnf(stderr, "sync-back was interrupted; the rest is still in the sandbox")
	}
}

// printEach prints a "label: item" line for each item.
func printEach(w io.Writer, label string, items []string) {
	for _, it := range items {
		fmt.Fprintf(w, "%s: %s\n", label, it)
	}
}

func printPlan(w io.Writer, p *runPlan) error {
	fmt.Fprintf(w, "persona: %s@%s on %s\n", p.Persona, p.Tier, p.Harness)
	for _, o := range p.Layers {
		fmt.Fprintf(w, "layer: %s %s\n", o.Layer, o.File)
	}
	fmt.Fprintf(w, "model: %s\nroot: %s\n", p.Resolved.Model, p.Root)
	if p.Profile != "" {
		fmt.Fprintf(w, "profile: %s\n", p.Profile)
	}
	if p.InRepo {
		fmt.Fprintf(w, "runs in: %s (no sandbox)\n", p.Workdir)
	} else {
		fmt.Fprintf(w, "sandbox: %s\nruns in: %s\n", p.Sandbox, p.Workdir)
	}
	printEach(w, "hidden", p.Hidden)
	printEach(w, "ignored", p.Ignored)
	printEach(w, "read-only", p.Readonly)
	if e := p.Extend; e != nil {
		printEach(w, "folded", e.Folded)
		printEach(w, "loaded by the harness itself", e.LoadedAnyway)
	}
	if m := p.Materialized; m != nil {
		fmt.Fprintf(w, "materialized: %s (%s)\n---\n%s\n---\n", m.Path, m.Mode, m.Text)
	} else {
		fmt.Fprintln(w, "materialized: none")
	}
	printEach(w, "env", p.Env)
	for _, v := range p.Sealed {
		if v.Dropped {
			fmt.Fprintf(w, "env dropped: %s\n", v.Name)
		} else {
			fmt.Fprintf(w, "env rewritten: %s=%s\n", v.Name, v.Value)
		}
	}
	for path := range p.ConfigFiles {
		fmt.Fprintf(w, "config file: %s\n", path)
	}
	fmt.Fprintf(w, "argv: %s\n", shellJoin(p.Argv))
	return nil
}

// shellJoin quotes argv for display as a shell command line.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
