package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

func TestMain(m *testing.M) {
	// The test binary started as the launcher by a confined run of the
	// tests that call the command layer in process (confine.Start
	// executes /proc/self/exe).
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	testscript.Main(removingBuilds{m}, map[string]func(){
		"workforce": scriptWorkforce,
	})
}

// removingBuilds runs the tests, then removes the binaries they built
// (builtOnce): the test binary exits as its Run returns.
type removingBuilds struct{ m *testing.M }

func (r removingBuilds) Run() int {
	code := r.m.Run()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	return code
}

// builds are the binaries the tests build once for all of them (the
// stand-in harness, the scripts' workforce), in a directory of their own:
// each test that needs one used to build it again (TestScript and
// TestScriptOverlay the two, each queue test the stand-in).
var builds struct {
	mu   sync.Mutex
	dir  string
	done map[string]string
}

// builtOnce returns the binary go build makes of pkg, built by the first
// test that asks.
func builtOnce(t testing.TB, pkg, name string) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if out, ok := builds.done[pkg]; ok {
		return out
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "workforce-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		builds.dir, builds.done = dir, map[string]string{}
	}
	out := filepath.Join(builds.dir, name)
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	builds.done[pkg] = out
	return out
}

// scriptBinEnv names a workforce binary built for the scripts (TestScript):
// the test binary, started as a script's workforce command, becomes it.
// Built without -race, a script's command runs at the speed of the
// release build, where the race-built test binary took three times as
// long (the root package was the critical path of make test); the
// packages' own tests, and this package's Go tests, keep -race.
const scriptBinEnv = "WORKFORCE_SCRIPT_BIN"

// scriptWorkforce is a script's workforce command: the binary
// scriptBinEnv names, else this one's main.
func scriptWorkforce() {
	if bin := os.Getenv(scriptBinEnv); bin != "" {
		err := syscall.Exec(bin, append([]string{"workforce"}, os.Args[1:]...), os.Environ())
		fmt.Fprintf(os.Stderr, "cannot start %s: %v\n", bin, err)
		os.Exit(1)
	}
	main()
}

// oneShotFixtures is the directory of the recorded one-shot outputs.
var oneShotFixtures string

// TestScript runs the command-line scripts in testdata/script. Set
// TESTSCRIPT_UPDATE=1 to rewrite the expected output in place.
//
// The scripts run confined, as a user's runs are by default (sandbox mode
// on: Setup clears $WORKFORCE_SANDBOX). The rule for a script, old or
// new: a stand-in that writes outside its sandbox (its logs under $LOG, a
// pid file, a file the test waits for, playing the user editing the
// repository) gets that directory allowed explicitly, the way a user
// would: `allowdir DIR...` (sandbox.allow in the home's config.json,
// for every run, batch task and worker task of the script; after any
// line that writes config.json whole) or `--sandbox-allow DIR` on one
// command. Never turn the sandbox off to make a helper work: a script
// sets WORKFORCE_SANDBOX=off (or --sandbox=off) only where it tests
// unconfined behaviour on purpose, with a comment saying why. Mind that
// a stand-in action denied by the sandbox is only reported on its stderr
// and the rest run: a script can pass with its setup undone (a fifo never
// made, tasks that never met), so check that what a stand-in writes
// outside is allowed, not only that the script passes. As root the
// once-a-run warning that Landlock leaves root's capabilities whole is
// silenced (WORKFORCE_ROOT_WARNING=off), so that the scripts' stderr is
// the same as root and as a user; run_confined.txtar turns it back on
// and checks it.
func TestScript(t *testing.T) {
	testscript.Run(t, scriptParams(t))
}

// overlayScripts returns the scripts TestScriptOverlay runs again with
// the overlay's tree ($WORKFORCE_TREE=overlay): every script of run,
// sessions and batch (a batch's tasks are runs, and sync back as they
// do). Some of their runs take the copy, with the warning the script
// then sees, where the overlay cannot be had (docs/testing.md lists
// which, and why). The scripts of the overlay itself (tree_*.txtar) ask
// for it and run in TestScript.
func overlayScripts(t *testing.T) []string {
	var files []string
	for _, glob := range []string{"run*.txtar", "sessions_*.txtar", "batch*.txtar"} {
		m, err := filepath.Glob(filepath.Join("testdata", "script", glob))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 70 {
		t.Fatalf("found %d scripts of run, sessions and batch, want 70 or more: %v", len(files), files)
	}
	return files
}

// TestScriptOverlay runs overlayScripts with the project shown to the
// harness through an overlay instead of a copy (issue 44), where this
// system allows it; it is skipped, with the reason, where it does not.
func TestScriptOverlay(t *testing.T) {
	if err := confine.Available(); err != nil {
		t.Skipf("no overlay: the harness cannot be confined here: %v", err)
	}
	if err := confine.NamespacesAvailable(""); err != nil {
		t.Skipf("no overlay: no namespaces here: %v", err)
	}
	if ok, why := confine.OverlayAvailable(t.TempDir()); !ok {
		t.Skipf("no overlay: %s", why)
	}
	p := scriptParams(t)
	p.Dir = ""
	p.Files = overlayScripts(t)
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		err := setup(env)
		env.Setenv(session.TreeEnv, string(session.TreeOverlay))
		// Where a session keeps the agent's files: the upper layer.
		env.Setenv("BOXTREE", mount.UpperDir)
		return err
	}
	cond := p.Condition
	p.Condition = func(c string) (bool, error) {
		if c == "treeoverlay" {
			return true, nil
		}
		return cond(c)
	}
	testscript.Run(t, p)
}

// overlayHere reports whether this system lets a harness see the project
// through an overlay (confine.OverlayAvailable, tried once in a
// directory of its own).
var overlayHere = sync.OnceValue(func() bool {
	// Under /var/tmp, as the scripts' directories: the probe's launcher
	// shows its own /tmp.
	root := ""
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		root = "/var/tmp"
	}
	dir, err := os.MkdirTemp(root, "overlay-probe-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	ok, _ := confine.OverlayAvailable(dir)
	return ok
})

// scriptParams are the parameters of the testscripts: the script
// commands, the environment each script starts with, the conditions.
func scriptParams(t *testing.T) testscript.Params {
	standin := buildStandin(t)
	scriptBin := buildScriptBin(t)
	var err error
	if oneShotFixtures, err = filepath.Abs("harness/testdata/oneshot"); err != nil {
		t.Fatal(err)
	}
	sessionFixtures, err := filepath.Abs("history/sessions/testdata")
	if err != nil {
		t.Fatal(err)
	}
	failureFixtures, err := filepath.Abs("harness/testdata/failure")
	if err != nil {
		t.Fatal(err)
	}
	return testscript.Params{
		Dir:           "testdata/script",
		WorkdirRoot:   workdirRoot(t),
		UpdateScripts: os.Getenv("TESTSCRIPT_UPDATE") != "",
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"extendcheck": extendCheck,
			"hidefolded":  hideFolded,
			"waitfile":    waitFile,
			"signal":      signalCmd,
			"standin":     standinCmd(standin),
			"waitphase":   waitPhase,
			"waitharness": waitHarness,
			"harnesspid":  harnessPid,
			"netserve":    netServe,
			"waitgone":    waitGone,
			"killwriter":  killWriter,
			"sametree":    sameTree,
			"validresult": validResult,
			"validevents": validEvents,
			"nats":        natsCmd,
			"allowdir":    allowDir,
			"shmdir":      shmDir,
		},
		Setup: func(env *testscript.Env) error {
			// Under -race, every process would sleep a second at exit
			// (the race runtime's default atexit_sleep_ms), and the
			// scripts start hundreds.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			// Keep every script away from the real home directory.
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("AGENT_WORKFORCE_HOME", env.WorkDir+"/home/.agentworkforce/workforce")
			env.Setenv("PERSONAS", env.WorkDir+"/home/.agentworkforce/workforce/personas")
			// WORKFORCE_BIN holds the workforce command alone, for scripts that
			// need a PATH without anything else on it.
			env.Setenv("WORKFORCE_BIN", filepath.SplitList(env.Getenv("PATH"))[0])
			// ONESHOT holds the one-shot outputs recorded from the real
			// harnesses, for the stand-in to answer with ($STANDIN_OUTPUT).
			env.Setenv("ONESHOT", oneShotFixtures)
			env.Setenv(scriptBinEnv, scriptBin)
			// FAILURES holds what the real harnesses printed when they
			// failed (harness/testdata/failure). A path a confined
			// harness opens must name no "..": under /tmp (a clone
			// there), only the file itself is bound into its private
			// /tmp, not the directories a ".." passes through.
			env.Setenv("FAILURES", failureFixtures)
			// SESSIONFIXTURES holds the harnesses' own session records,
			// made by the real harnesses (history/sessions/testdata).
			env.Setenv("SESSIONFIXTURES", sessionFixtures)
			// Scripts run confined, as runs are by default; a script
			// allows what its stand-ins write outside their sandbox
			// (the rule in TestScript's comment).
			env.Setenv(session.SandboxEnv, "")
			env.Setenv(session.TreeEnv, "")
			// Where a session keeps the agent's files: its copy
			// (TestScriptOverlay: the upper layer).
			env.Setenv("BOXTREE", mount.TreeDir)
			// As root, the same stderr as a user's (run_confined.txtar
			// checks the warning).
			env.Setenv(confine.RootWarningEnv, "off")
			env.Defer(func() { killTmux(env.WorkDir) })
			return os.MkdirAll(env.WorkDir+"/home", 0o755)
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "landlock": // this kernel can confine a harness
				return confine.Available() == nil, nil
			case "root": // the tests run as root (effective user id 0)
				return os.Geteuid() == 0, nil
			case "namespaces": // a confined harness runs in namespaces of its own
				return confine.Available() == nil && confine.NamespacesAvailable("") == nil, nil
			case "devshm": // the system has a /dev/shm
				fi, err := os.Stat("/dev/shm")
				return err == nil && fi.IsDir(), nil
			case "overlay": // the harness can see the project through an overlay
				return confine.Available() == nil && confine.NamespacesAvailable("") == nil && overlayHere(), nil
			case "treeoverlay": // the script runs again with $WORKFORCE_TREE=overlay (TestScriptOverlay)
				return false, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
}

// extendCheck implements the script command
//
//	extendcheck REAL.json SANDBOX.json PERSONA
//
// REAL.json and SANDBOX.json are `workforce context --json` outputs, in the
// user's real directory and in the sandbox; PERSONA holds the persona's
// text. The project files the harness reads in the sandbox must give,
// joined as the harness joins them, exactly the real ones followed by the
// extend separator and the persona text; the global files must be the same
// (by name and content: the sandbox's are the per-session state's copies).
func extendCheck(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: extendcheck REAL.json SANDBOX.json PERSONA")
	}
	type file struct {
		Path, Scope, Content string
	}
	var profile string
	read := func(name string) (project, global []string) {
		var out struct {
			Profile string
			Files   []file
		}
		if err := json.Unmarshal([]byte(ts.ReadFile(name)), &out); err != nil {
			ts.Fatalf("%s: %v", name, err)
		}
		profile = out.Profile
		for _, f := range out.Files {
			if f.Scope == "global" {
				// By name: in the sandbox the harness reads the
				// per-session copy of its configuration directory.
				global = append(global, filepath.Base(f.Path)+"\n"+f.Content)
			} else {
				project = append(project, f.Content)
			}
		}
		return project, global
	}
	realProject, realGlobal := read(args[0])
	boxProject, boxGlobal := read(args[1])
	want := ts.ReadFile(args[2])
	if len(realProject) > 0 {
		want = strings.Join(realProject, "\n\n") + "\n\n---\n\n" + want
	}
	if profile == "claude" {
		// claude trims each file, the materialized one included.
		want = strings.TrimSpace(want)
	}
	got := strings.Join(boxProject, "\n\n")
	ok := got == want && strings.Join(realGlobal, "\x00") == strings.Join(boxGlobal, "\x00")
	if ok == neg {
		ts.Fatalf("sandbox text:\n%q\nwant:\n%q\nglobals %q vs %q", got, want, boxGlobal, realGlobal)
	}
}

// killTmux ends the tmux servers a script started on sockets in its
// directory dir ($WORK/*.sock), with what runs in them: a script that
// fails before its own kill-server leaves none behind.
func killTmux(dir string) {
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	for _, s := range socks {
		exec.Command("tmux", "-S", s, "kill-server").Run()
	}
}

// buildScriptBin builds workforce for the scripts (scriptBinEnv), as the
// test binary is built but without -race, once for all the tests.
func buildScriptBin(t testing.TB) string { return builtOnce(t, ".", "workforce") }

// buildStandin compiles internal/standin, the stand-in harness, once for
// all the tests.
func buildStandin(t testing.TB) string { return builtOnce(t, "./internal/standin", "standin") }

// standinCmd implements the script command
//
//	standin DIR [NAME...]
//
// which links the compiled stand-in into DIR under each NAME (default:
// claude, codex, opencode, gemini), so that workforce starts it as that harness,
// directly, with no shell in between.
func standinCmd(bin string) func(*testscript.TestScript, bool, []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 1 {
			ts.Fatalf("usage: standin DIR [NAME...]")
		}
		dir := ts.MkAbs(args[0])
		names := args[1:]
		if len(names) == 0 {
			names = []string{"claude", "codex", "opencode", "gemini"}
		}
		ts.Check(os.MkdirAll(dir, 0o755))
		for _, n := range names {
			ts.Check(os.Symlink(bin, filepath.Join(dir, n)))
		}
	}
}

// hideFolded implements the script command
//
//	hidefolded PLAN.json
//
// PLAN.json is the output of `workforce run --dry-run --json` in extend
// mode: the files it hides must be exactly the folded files inside the
// project root and the surfaced ones (files that would take a folded
// file's place at start).
func hideFolded(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: hidefolded PLAN.json")
	}
	var plan struct {
		Root   string
		Hidden []string
		Extend *struct {
			Folded, Surfaced []string
		}
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &plan); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if plan.Extend == nil {
		ts.Fatalf("%s: not an extend-mode plan", args[0])
	}
	want := map[string]bool{}
	for _, f := range plan.Extend.Folded {
		if rel, err := filepath.Rel(plan.Root, f); err == nil && !strings.HasPrefix(rel, "..") {
			want[filepath.ToSlash(rel)] = true
		}
	}
	for _, f := range plan.Extend.Surfaced {
		want[f] = true
	}
	got := map[string]bool{}
	for _, f := range plan.Hidden {
		got[f] = true
	}
	same := len(got) == len(want)
	for f := range want {
		same = same && got[f]
	}
	if same == neg {
		ts.Fatalf("hidden %q; folded in the project and surfaced: %v", plan.Hidden, want)
	}
}

// waitFile implements the script command
//
//	waitfile PATH
//
// which waits, at most 30 s, until PATH exists and is not empty.
func waitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear within 30 s", args[0])
}

// signalCmd implements the script command
//
//	signal TERM|HUP|INT PIDFILE
//
// which sends the signal to the process whose id PIDFILE holds.
func signalCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal TERM|HUP|INT PIDFILE")
	}
	sig, ok := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT}[args[0]]
	if !ok {
		ts.Fatalf("unknown signal %s", args[0])
	}
	pid, inner := scriptPid(ts, args[1])
	if inner == 1 && pid != 1 {
		// The parent of a harness in namespaces is the launcher, process
		// 1 there: the process meant is its parent, workforce (found
		// once: the launcher is gone after the harness exits).
		key := ts.MkAbs(args[1]) + "\x00" + ts.ReadFile(args[1]) + "\x00parent"
		if parent := parentPid(pid); parent != 0 {
			pid = parent
			translatedPids.Store(key, pid)
		} else if v, ok := translatedPids.Load(key); ok {
			pid = v.(int)
		}
	}
	if pid < 2 {
		ts.Fatalf("%s names process %d: not one to signal", args[1], pid)
	}
	ts.Check(syscall.Kill(pid, sig))
}

// sessionRecord is what the script commands read of a session's record.
type sessionRecord struct {
	Phase      string
	HarnessPID int `json:"harnessPid"`
}

// awaitRecord waits, at most 30 s, until the record of a session of
// $AGENT_WORKFORCE_HOME satisfies ok.
func awaitRecord(ts *testscript.TestScript, what string, ok func(sessionRecord) bool) {
	pattern := filepath.Join(ts.Getenv("AGENT_WORKFORCE_HOME"), "sessions", "*", "session.json")
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		records, _ := filepath.Glob(pattern)
		for _, path := range records {
			var r sessionRecord
			if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &r) == nil && ok(r) {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	ts.Fatalf("no session record %s within 30 s", what)
}

// waitPhase implements the script command
//
//	waitphase PHASE
//
// which waits, at most 30 s, until the record of a session of
// $AGENT_WORKFORCE_HOME says PHASE.
func waitPhase(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitphase PHASE")
	}
	awaitRecord(ts, "said "+args[0], func(r sessionRecord) bool { return r.Phase == args[0] })
}

// waitHarness implements the script command
//
//	waitharness PIDFILE
//
// which waits, at most 30 s, until the record of a session of
// $AGENT_WORKFORCE_HOME names as its harness the process whose id PIDFILE
// holds.
func waitHarness(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitharness PIDFILE")
	}
	pid := recordedPid(ts, args[0])
	awaitRecord(ts, fmt.Sprintf("named process %d its harness", pid), func(r sessionRecord) bool { return r.HarnessPID == pid })
}

// procState returns the state letter of process pid in /proc/PID/stat, 0
// when there is no such process.
func procState(pid int) byte {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0
	}
	return data[i+2]
}

// waitGone implements the script command
//
//	waitgone PIDFILE
//
// which waits, at most 30 s, until the process whose id PIDFILE holds has
// exited (a zombie, exited but not reaped, counts as exited): the way to
// wait for a process the script did not start, an orphan.
func waitGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitgone PIDFILE")
	}
	pid, _ := scriptPid(ts, args[0])
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st := procState(pid); pid == 0 || st == 0 || st == 'Z' || st == 'X' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("process %d still runs after 30 s", pid)
}

// killWriter implements the script command
//
//	killwriter MINBYTES
//
// which waits, at most 30 s, until a process working in the script's
// directory tree holds open for writing a regular file of at least
// MINBYTES bytes, and kills it (SIGKILL) there: in the middle of writing
// that file, wherever the file is and whatever its name.
func killWriter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killwriter MINBYTES")
	}
	minSize, err := strconv.ParseInt(args[0], 10, 64)
	ts.Check(err)
	work, err := filepath.EvalSymlinks(ts.Getenv("WORK"))
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			pid, _ := strconv.Atoi(filepath.Base(p))
			if cwd, err := os.Readlink(p + "/cwd"); err != nil || pid == os.Getpid() || (cwd != work && !strings.HasPrefix(cwd, work+"/")) {
				continue
			}
			fds, _ := os.ReadDir(p + "/fd")
			for _, fd := range fds {
				fi, err := os.Stat(p + "/fd/" + fd.Name())
				if err != nil || !fi.Mode().IsRegular() || fi.Size() < minSize || !openForWriting(p+"/fdinfo/"+fd.Name()) {
					continue
				}
				target, _ := os.Readlink(p + "/fd/" + fd.Name())
				ts.Check(syscall.Kill(pid, syscall.SIGKILL))
				ts.Logf("killed process %d writing %s (%d bytes so far)", pid, target, fi.Size())
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	ts.Fatalf("no process wrote a file of %d bytes within 30 s", minSize)
}

// openForWriting reports whether the /proc/PID/fdinfo/FD file says the
// file is open for writing.
func openForWriting(fdinfo string) bool {
	data, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return false
}

// sameTree implements the script command
//
//	sametree DIR1 DIR2
//
// which checks that the two trees, their .git directories aside, hold the
// same entries: the same paths, types and permissions, files with the same
// bytes, symlinks with the same targets, and nothing more on either side.
func sameTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametree DIR1 DIR2")
	}
	read := func(dir string) map[string]string {
		out := map[string]string{}
		root := ts.MkAbs(dir)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			rel, _ := filepath.Rel(root, path)
			fi, err := d.Info()
			if err != nil {
				return err
			}
			desc := fi.Mode().String()
			switch {
			case fi.Mode().IsRegular():
				desc += fmt.Sprintf(" %d bytes", fi.Size())
			case fi.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(path)
				desc += " -> " + target
			}
			out[rel] = desc
			return nil
		})
		ts.Check(err)
		return out
	}
	a, b := read(args[0]), read(args[1])
	var diffs []string
	for rel, da := range a {
		db, ok := b[rel]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("only in %s: %s", args[0], rel))
		case da != db:
			diffs = append(diffs, fmt.Sprintf("%s differs: %s vs %s", rel, da, db))
		case strings.HasPrefix(da, "-"): // a regular file: byte for byte
			ba, err := os.ReadFile(filepath.Join(ts.MkAbs(args[0]), rel))
			ts.Check(err)
			bb, err := os.ReadFile(filepath.Join(ts.MkAbs(args[1]), rel))
			ts.Check(err)
			if !bytes.Equal(ba, bb) {
				diffs = append(diffs, fmt.Sprintf("%s differs in content", rel))
			}
		}
	}
	for rel := range b {
		if _, ok := a[rel]; !ok {
			diffs = append(diffs, fmt.Sprintf("only in %s: %s", args[1], rel))
		}
	}
	sort.Strings(diffs)
	if (len(diffs) == 0) == neg {
		if neg {
			ts.Fatalf("%s and %s are the same tree", args[0], args[1])
		}
		ts.Fatalf("%s and %s differ:\n%s", args[0], args[1], strings.Join(diffs, "\n"))
	}
}

// validResult implements the script command
//
//	validresult FILE
//
// FILE must hold one result object valid under the published JSON Schema
// (report.ResultSchema).
func validResult(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: validresult FILE")
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(report.ResultSchemaURL, bytes.NewReader(report.ResultSchema)); err != nil {
		ts.Fatalf("%v", err)
	}
	sch, err := c.Compile(report.ResultSchemaURL)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	var doc any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
	if err := sch.Validate(doc); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}

// validEvents implements the script command
//
//	validevents FILE [TYPE...]
//
// FILE must hold the output of run --events: JSON lines, each an event
// valid under the published JSON Schema (report.EventSchema), their times
// in order, all of the same session, the last one finished (and no other)
// with that session's result. With TYPEs, the events' types must be those,
// in that order.
func validEvents(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || neg {
		ts.Fatalf("usage: validevents FILE [TYPE...]")
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for url, data := range map[string][]byte{report.ResultSchemaURL: report.ResultSchema, report.EventSchemaURL: report.EventSchema} {
		if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
			ts.Fatalf("%v", err)
		}
	}
	sch, err := c.Compile(report.EventSchemaURL)
	if err != nil {
		ts.Fatalf("%v", err)
	}
	data := ts.ReadFile(args[0])
	if !strings.HasSuffix(data, "\n") {
		ts.Fatalf("%s does not end with a newline", args[0])
	}
	var types []string
	var last report.Event
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for i, line := range lines {
		var doc any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			ts.Fatalf("%s:%d: not JSON: %v\n%s", args[0], i+1, err, line)
		}
		if err := sch.Validate(doc); err != nil {
			ts.Fatalf("%s:%d: %v\n%s", args[0], i+1, err, line)
		}
		var e report.Event
		ts.Check(json.Unmarshal([]byte(line), &e))
		if i > 0 && (e.Time.Before(last.Time) || e.SessionID != last.SessionID) {
			ts.Fatalf("%s:%d: time %v after %v, session %s after %s", args[0], i+1, e.Time, last.Time, e.SessionID, last.SessionID)
		}
		if (e.Type == report.EventFinished) != (i == len(lines)-1) {
			ts.Fatalf("%s:%d: a %s event; finished must be the last, and only the last", args[0], i+1, e.Type)
		}
		types = append(types, string(e.Type))
		last = e
	}
	if last.Result == nil || last.Result.SessionID != last.SessionID {
		ts.Fatalf("%s: the finished event's result is not the session's", args[0])
	}
	if len(args) > 1 && strings.Join(types, " ") != strings.Join(args[1:], " ") {
		ts.Fatalf("%s: events %s, want %s", args[0], strings.Join(types, " "), strings.Join(args[1:], " "))
	}
}

// shmDir implements the script command
//
//	shmdir NAME
//
// which makes a new directory in /dev/shm, removed when the script ends,
// and sets NAME to its path: a workforce home or a project there, which
// the harness's own /dev covers (the condition devshm says whether the
// system has one).
func shmDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: shmdir NAME")
	}
	dir, err := os.MkdirTemp("/dev/shm", "workforce-script-")
	ts.Check(err)
	ts.Defer(func() {
		// The overlay's work directory is left unwritable.
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	ts.Setenv(args[0], dir)
}

// allowDir implements the script command
//
//	allowdir DIR...
//
// which makes each DIR (relative to $WORK unless absolute) and adds it to
// "sandbox": {"allow": [...]} in $AGENT_WORKFORCE_HOME/config.json,
// keeping the rest of the file (a bare "sandbox" mode becomes its "mode"):
// what a user writes there to let every confined run write a directory
// outside its sandbox.
func allowDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: allowdir DIR...")
	}
	path := filepath.Join(ts.Getenv("AGENT_WORKFORCE_HOME"), "config.json")
	cfg := map[string]any{}
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &cfg); err != nil {
			ts.Fatalf("%s: %v", path, err)
		}
	} else if !os.IsNotExist(err) {
		ts.Fatalf("%v", err)
	}
	sb, _ := cfg["sandbox"].(map[string]any)
	if mode, ok := cfg["sandbox"].(string); ok {
		sb = map[string]any{"mode": mode}
	}
	if sb == nil {
		sb = map[string]any{}
	}
	allow, _ := sb["allow"].([]any)
	for _, a := range args {
		dir := filepath.Clean(ts.MkAbs(a))
		ts.Check(os.MkdirAll(dir, 0o755))
		allow = append(allow, dir)
	}
	sb["allow"] = allow
	cfg["sandbox"] = sb
	data, err := json.MarshalIndent(cfg, "", "  ")
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	ts.Check(os.WriteFile(path, append(data, '\n'), 0o644))
}

// workdirRoot is where the scripts' work directories go: outside /tmp,
// which a confined harness in namespaces sees as its session's tmp only
// (the real /tmp hidden but for the paths the run needs), while the
// scripts keep their action files and logs in $WORK. /var/tmp when the
// system has it, else the default.
func workdirRoot(t *testing.T) string {
	if fi, err := os.Stat("/var/tmp"); err != nil || !fi.IsDir() {
		return ""
	}
	dir, err := os.MkdirTemp("/var/tmp", "workforce-scripts-")
	if err != nil {
		return ""
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// scriptPid reads the process id a stand-in wrote to file (internal/
// standin's pidLine: the id, and the PID namespace it is an id of) and
// returns it as this process sees it, and the id as written. A harness in
// namespaces of its own writes an id of its namespace: the process is
// found by its namespace and its id there (the last of NSpid in
// /proc/PID/status); 0 when it is gone.
func scriptPid(ts *testscript.TestScript, file string) (pid, inner int) {
	content := ts.ReadFile(file)
	key := ts.MkAbs(file) + "\x00" + content
	defer func() {
		switch v, ok := translatedPids.Load(key); {
		case pid != 0 && pid != inner:
			translatedPids.Store(key, [2]int{pid, inner})
		case pid == 0 && ok:
			// Found before, gone since with its namespace (a second
			// signal to workforce, whose harness has exited).
			p := v.([2]int)
			pid, inner = p[0], p[1]
		}
	}()
	f := strings.Fields(content)
	if len(f) == 0 {
		ts.Fatalf("%s holds no process id", file)
	}
	inner, err := strconv.Atoi(f[0])
	ts.Check(err)
	own, _ := os.Readlink("/proc/self/ns/pid")
	if len(f) < 2 || f[1] == own {
		return inner, inner
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		host, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ns, _ := os.Readlink("/proc/" + e.Name() + "/ns/pid"); ns != f[1] {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if ids, ok := strings.CutPrefix(line, "NSpid:"); ok {
				fs := strings.Fields(ids)
				if len(fs) > 1 && fs[len(fs)-1] == f[0] {
					return host, inner
				}
			}
		}
	}
	return 0, inner
}

// translatedPids are the ids scriptPid found in /proc, by file and
// content.
var translatedPids sync.Map

// parentPid is the parent of process pid, 0 when it is gone.
func parentPid(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// recordedPid is the process id a stand-in wrote to file as a session's
// record names its harness: in namespaces, the launcher (the stand-in's
// parent), whose id Start returned.
func recordedPid(ts *testscript.TestScript, file string) int {
	pid, inner := scriptPid(ts, file)
	if inner != pid {
		pid = parentPid(pid)
	}
	return pid
}

// harnessPid implements the script command
//
//	harnesspid PIDFILE OUT
//
// which writes to OUT "(process N)", N the harness's process id as
// workforce names it (recordedPid).
func harnessPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: harnesspid PIDFILE OUT")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(fmt.Sprintf("(process %d)\n", recordedPid(ts, args[0]))), 0o644))
}
