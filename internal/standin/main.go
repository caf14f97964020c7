// Command standin stands in for a harness (claude, opencode, codex, gemini) in the
// command-line tests. It is a compiled program, started by workforce
// without a shell in between, so it sees the environment exactly as
// workforce built it: a shell would reset PWD at start-up and hide a stale
// one. The tests build it once and link it under each harness's name.
//
// It behaves as the real harness it is named after where that matters to
// a sandbox: as opencode it takes its directory from $PWD (falling back to
// getcwd when PWD is unset), as claude and codex from getcwd. In that
// directory it records, when $LOG names a directory:
//
//	argv      its arguments, joined by spaces
//	cwd       getcwd
//	pwd       $PWD ("<unset>" when unset)
//	oldpwd    $OLDPWD ("<unset>" when unset)
//	dir       the directory it works in
//	env       its environment, sorted
//	config    the file $OPENCODE_CONFIG names, when set
//	agent     as opencode, the agent --agent names as opencode would
//	          merge it from its configuration sources (opencode.go)
//	context   `workforce context --harness NAME --no-globals` in dir
//	box.json  `workforce context --harness NAME --json` in dir
//
// ($STANDIN_CONTEXT: "text" records only context, "json" only box.json,
// "none" neither; each is a run of workforce, which the tests pay for.)
//
//	ppid      its parent's process id (workforce), written last
//
// Linked as npm or npx, it serves packages and skills offline (npm.go).
//
// Asked for --version alone, it prints $STANDIN_VERSION_<NAME> (NAME in
// capitals), else the measured version of the harness it is named after,
// and records nothing.
//
// Then it carries out the actions of the file $STANDIN_DO, one per line,
// with $VARIABLES expanded; relative paths are relative to dir. Named
// opencode and started as `opencode session list` (a session lookup,
// which loads the project's plugins as a run does), it carries out
// those of $STANDIN_DO_SESSIONS instead, when that is set:
//
//	append PATH TEXT...    append TEXT and a newline to PATH
//	tryappend PATH TEXT... append TEXT and a newline to PATH, and record
//	                       in $LOG/tries "PATH: ok", or the error's
//	                       errno name ("PATH: EACCES"), instead of
//	                       failing: a write the sandbox may deny
//	tryread PATH...        read each PATH (a directory: list it), and record
//	                       in $LOG/reads "PATH: ok", or the error's errno
//	                       name ("PATH: EACCES"): a read the sandbox may
//	                       deny
//	tryconnect, tryunix, tryfetch, scanenv: the network actions (net.go)
//	baseurl, jsonget, scanfiles: what a harness takes of its API keys
//	                       and base URLs (broker.go)
//	shell OUT SCRIPT...    run sh -c SCRIPT in dir, its output and then
//	                       "exit N" appended to OUT (a grandchild's
//	                       writes: sh's own children)
//	write PATH TEXT...     write TEXT and a newline to PATH
//	rm PATH                remove PATH
//	mkdir PATH             make the directory PATH and those above it
//	run OUT CMD ARGS...    run CMD in dir (no shell), its stdout to OUT
//	setenv NAME VALUE...   set NAME to VALUE (the rest of the line) in its
//	                       environment, for the commands it runs after
//	                       (a git author and date for run git commit)
//	spawn CMD ARGS...      start CMD in dir in a session of its own and
//	                       leave it running (a process the harness leaves
//	                       behind)
//	daemon PIDFILE [MODE]  leave a process behind as a daemon does: a child
//	                       in a session of its own (setsid) starts the
//	                       stand-in again as a grandchild and exits at
//	                       once (a double fork); the grandchild writes its
//	                       process id to PIDFILE, holds no descriptor of
//	                       the harness's and lives 120 s. MODE stubborn:
//	                       it ignores SIGTERM; mark: on SIGTERM it writes
//	                       left.txt in its working directory (the
//	                       harness's), then exits; stopparent: it ignores
//	                       SIGTERM and sends SIGSTOP to the harness's
//	                       parent (workforce run) every 10 ms while that
//	                       lives. The action returns once PIDFILE is
//	                       written.
//	stopparent             send SIGSTOP to its parent (workforce run) once
//	trap                   record SIGTERM and SIGHUP in $LOG/signals, one
//	                       name a line, instead of dying of them
//	awaitsignals N         wait (at most 20 s) until N signals were trapped
//	sleep SECONDS          sleep
//	exit N                 exit with status N
//	pid PATH               write its process id and a newline to PATH
//	waitfor PATH           wait (at most 30 s) until PATH exists
//	fill PATH BYTES        write BYTES bytes to PATH: numbered lines, the
//	                       same for the same BYTES
//	many DIR N TEXT...     write N files DIR/f0001.txt, DIR/f0002.txt, ...,
//	                       each TEXT, a space, its number and a newline
//	skills OUT             write to OUT the skills the harness it is named
//	                       after would see (skills.go)
//	keepwriting PATH UNTIL TEXT...
//	                       append TEXT and a newline to PATH every 20 ms
//	                       until UNTIL exists (at most 30 s): a file that
//	                       never settles
//	output PATH            send its standard output and error to PATH
//	                       (appended) from now on, letting go of those it
//	                       was given: a harness that outlives workforce
//	                       must not hold the test's pipes open
//
// A PATH in double quotes is read as a Go string literal, so that a test
// can name a file with control bytes or invalid UTF-8 ("a\x1bb\xff.txt");
// it holds no space.
//
// A failing action is reported on stderr and the rest still run. The exit
// status is 0 unless an exit action says otherwise.
//
// Started in a one-shot mode (claude or gemini with -p among its
// arguments, codex with exec as its first argument, opencode with run),
// it also records
//
//	stdin     its standard input, read to the end before the actions
//
// and, when $STANDIN_OUTPUT names a file, prints that file on its
// standard output once the actions are done (before an exit action's
// exit too), so that a test can make it answer with the output recorded
// from the real harness (harness/testdata/oneshot). Each @WORKDIR@ in it
// becomes its working directory, as a real harness names the files of
// the sandbox. $STANDIN_OUTPUT_<NAME> (NAME in capitals), when set, is
// the file of the harness it is named after instead, so that two
// harnesses of one test answer differently.
//
// Named opencode with --print-logs among its arguments, it then prints
// the file $STANDIN_LOGS names, if any, on its standard error: the log
// lines the real opencode prints there (harness/testdata/failure holds
// the measured ones).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// trapped counts the signals the trap action caught.
var trapped atomic.Int32

// versions are what each stand-in answers to --version by default: the
// measured versions, so that workforce picks the current profiles.
var versions = map[string]string{
	"claude":   "2.1.330 (Claude Code)",
	"codex":    "codex-cli 0.169.0",
	"opencode": "1.18.33",
	"gemini":   "0.61.0",
}

func main() {
	switch os.Getenv(roleEnv) {
	case "daemon-parent", "daemon":
		os.Exit(daemonRole(os.Getenv(roleEnv)))
	}
	name := filepath.Base(os.Args[0])
	if name == "npm" || name == "npx" {
		os.Exit(packageManager(name, os.Args[1:])) // npm.go
	}
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		v := os.Getenv("STANDIN_VERSION_" + strings.ToUpper(name))
		if v == "" {
			v = versions[name]
		}
		fmt.Println(v)
		return
	}
	cwd, err := syscall.Getwd() // the kernel's answer, never $PWD
	if err != nil {
		fail("getcwd: %v", err)
	}
	dir := cwd
	if name == "opencode" {
		if pwd := os.Getenv("PWD"); pwd != "" {
			dir = pwd
		}
	}
	oneShot := oneShotMode(name, os.Args[1:])
	if log := os.Getenv("LOG"); log != "" {
		record(log, name, cwd, dir)
		if oneShot {
			in, err := io.ReadAll(os.Stdin)
			if err != nil {
				fail("stdin: %v", err)
			}
			if err := os.WriteFile(filepath.Join(log, "stdin"), in, 0o644); err != nil {
				fail("%v", err)
			}
		}
		// Last, so that a test waiting for it finds the rest written.
		if err := os.WriteFile(filepath.Join(log, "ppid"), pidLine(os.Getppid()), 0o644); err != nil {
			fail("%v", err)
		}
	}
	do := os.Getenv("STANDIN_DO")
	if list := os.Getenv("STANDIN_DO_SESSIONS"); list != "" && name == "opencode" && len(os.Args) > 2 && os.Args[1] == "session" && os.Args[2] == "list" {
		do = list
	}
	if do != "" {
		data, err := os.ReadFile(do)
		if err != nil {
			fail("%v", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if code, exit := act(dir, os.ExpandEnv(strings.TrimSpace(line))); exit {
				if oneShot {
					printOutput()
				}
				os.Exit(code)
			}
		}
	}
	if oneShot {
		printOutput()
	}
}

// oneShotMode reports whether args start the harness name in its one-shot
// mode: claude -p, codex exec, opencode run.
func oneShotMode(name string, args []string) bool {
	switch name {
	case "claude":
		for _, a := range args {
			if a == "-p" || a == "--print" {
				return true
			}
		}
	case "codex":
		return len(args) > 0 && args[0] == "exec"
	case "opencode":
		return len(args) > 0 && args[0] == "run"
	case "gemini":
		for _, a := range args {
			if a == "-p" || a == "--prompt" || strings.HasPrefix(a, "--prompt=") {
				return true
			}
		}
	}
	return false
}

// printOutput prints the file $STANDIN_OUTPUT names, if any, on stdout.
func printOutput() {
	out := os.Getenv("STANDIN_OUTPUT")
	if own := os.Getenv("STANDIN_OUTPUT_" + strings.ToUpper(filepath.Base(os.Args[0]))); own != "" {
		out = own
	}
	if out == "" {
		return
	}
	data, err := os.ReadFile(out)
	if err != nil {
		fail("%v", err)
	}
	if wd, err := os.Getwd(); err == nil {
		data = bytes.ReplaceAll(data, []byte("@WORKDIR@"), []byte(wd))
	}
	if _, err := os.Stdout.Write(data); err != nil {
		fail("%v", err)
	}
	printLogs()
}

// printLogs prints the file $STANDIN_LOGS names, if any, on stderr when
// the stand-in is opencode and --print-logs is among its arguments: as
// the real opencode, whose log lines (its errors among them) reach
// stderr only then (harness/testdata/failure).
func printLogs() {
	logs := os.Getenv("STANDIN_LOGS")
	if logs == "" || filepath.Base(os.Args[0]) != "opencode" || !slices.Contains(os.Args[1:], "--print-logs") {
		return
	}
	data, err := os.ReadFile(logs)
	if err != nil {
		fail("%v", err)
	}
	os.Stderr.Write(data)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "standin: "+format+"\n", args...)
	os.Exit(1)
}

func orUnset(name string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return "<unset>"
}

func record(log, name, cwd, dir string) {
	put := func(file string, data []byte) {
		if err := os.WriteFile(filepath.Join(log, file), data, 0o644); err != nil {
			fail("%v", err)
		}
	}
	line := func(file, s string) { put(file, []byte(s+"\n")) }
	line("argv", strings.Join(os.Args[1:], " "))
	line("cwd", cwd)
	line("pwd", orUnset("PWD"))
	line("oldpwd", orUnset("OLDPWD"))
	line("dir", dir)
	env := os.Environ()
	sort.Strings(env)
	line("env", strings.Join(env, "\n"))
	if cfg := os.Getenv("OPENCODE_CONFIG"); cfg != "" {
		data, err := os.ReadFile(cfg)
		if err != nil {
			fail("%v", err)
		}
		put("config", data)
	}
	if name == "opencode" {
		if agent := opencodeAgent(dir, os.Args[1:]); agent != nil {
			data, err := json.MarshalIndent(agent, "", "  ")
			if err != nil {
				fail("%v", err)
			}
			put("agent", append(data, '\n'))
		}
	}
	switch name {
	case "claude", "codex", "opencode", "gemini":
		what := os.Getenv("STANDIN_CONTEXT")
		if what == "" || what == "text" {
			put("context", workforce(dir, "context", "--harness", name, "--no-globals"))
		}
		if what == "" || what == "json" {
			put("box.json", workforce(dir, "context", "--harness", name, "--json"))
		}
	}
}

// workforce runs `workforce ARGS` in dir and returns its standard output.
func workforce(dir string, args ...string) []byte {
	cmd := exec.Command("workforce", args...)
	cmd.Dir = dir // with Env nil, exec sets PWD to dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fail("workforce %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// act carries out one action line; it reports whether the stand-in should
// exit, and with which status.
func act(dir, line string) (int, bool) {
	verb, rest, _ := strings.Cut(line, " ")
	arg, text, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if u, err := strconv.Unquote(arg); err == nil && strings.HasPrefix(arg, `"`) {
		arg = u // a name with bytes a line cannot hold: "a\x1b[2J\n.txt"
	}
	path := arg
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	var err error
	switch verb {
	case "", "#":
	case "append", "write":
		flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if verb == "write" {
			flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		}
		var f *os.File
		if f, err = os.OpenFile(path, flag, 0o644); err == nil {
			_, err = f.WriteString(text + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	case "tryappend":
		result := "ok"
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			_, err = f.WriteString(text + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if errno := syscall.Errno(0); errors.As(err, &errno) {
			result = unix.ErrnoName(errno)
		} else if err != nil {
			result = err.Error()
		}
		err = appendLine(filepath.Join(os.Getenv("LOG"), "tries"), arg+": "+result)
	case "tryconnect", "tryunix", "tryfetch", "scanenv":
		_, err = netAct(verb, rest)
	case "baseurl", "jsonget", "scanfiles":
		err = brokerAct(dir, verb, rest)
	case "tryread":
		for _, p := range strings.Fields(rest) {
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(dir, abs)
			}
			var rerr error
			if fi, serr := os.Stat(abs); serr == nil && fi.IsDir() {
				_, rerr = os.ReadDir(abs)
			} else {
				_, rerr = os.ReadFile(abs)
			}
			result := "ok"
			if errno := syscall.Errno(0); errors.As(rerr, &errno) {
				result = unix.ErrnoName(errno)
			} else if rerr != nil {
				result = rerr.Error()
			}
			if err = appendLine(filepath.Join(os.Getenv("LOG"), "reads"), p+": "+result); err != nil {
				break
			}
		}
	case "shell":
		cmd := exec.Command("/bin/sh", "-c", text)
		cmd.Dir = dir
		out, rerr := cmd.CombinedOutput()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(rerr, &ee) {
			code = ee.ExitCode()
		} else if rerr != nil {
			code = -1
		}
		err = appendLine(path, fmt.Sprintf("%sexit %d", out, code))
	case "rm":
		err = os.Remove(path)
	case "mkdir":
		err = os.MkdirAll(path, 0o755)
	case "run":
		argv := strings.Fields(text)
		if len(argv) == 0 {
			err = fmt.Errorf("run needs a command")
			break
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err = cmd.Run(); err == nil {
			err = os.WriteFile(path, out.Bytes(), 0o644)
		}
	case "setenv":
		if arg == "" {
			err = fmt.Errorf("setenv needs a name")
			break
		}
		err = os.Setenv(arg, text)
	case "keepwriting":
		until, t, _ := strings.Cut(text, " ")
		if until != "" && !filepath.IsAbs(until) {
			until = filepath.Join(dir, until)
		}
		err = fmt.Errorf("%s did not appear within 30 s", until)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if ferr == nil {
				f.WriteString(t + "\n")
				f.Close()
			}
			if _, serr := os.Stat(until); serr == nil {
				err = nil
				break
			}
		}
	case "spawn":
		argv := strings.Fields(rest)
		if len(argv) == 0 {
			err = fmt.Errorf("spawn needs a command")
			break
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err = cmd.Start(); err == nil {
			err = cmd.Process.Release()
		}
	case "daemon":
		err = daemon(path, text)
	case "stopparent":
		err = syscall.Kill(os.Getppid(), syscall.SIGSTOP)
	case "trap":
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			for sig := range ch {
				f, err := os.OpenFile(filepath.Join(os.Getenv("LOG"), "signals"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				if err == nil {
					fmt.Fprintln(f, sig)
					f.Close()
				}
				trapped.Add(1)
			}
		}()
	case "awaitsignals":
		n, _ := strconv.Atoi(arg)
		deadline := time.Now().Add(20 * time.Second)
		for trapped.Load() < int32(n) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if trapped.Load() < int32(n) {
			err = fmt.Errorf("%d signals trapped, want %d", trapped.Load(), n)
		}
	case "sleep":
		var d float64
		if d, err = strconv.ParseFloat(arg, 64); err == nil {
			time.Sleep(time.Duration(d * float64(time.Second)))
		}
	case "pid":
		err = os.WriteFile(path, pidLine(os.Getpid()), 0o644)
	case "waitfor":
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err = os.Stat(path); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "fill":
		var n int64
		if n, err = strconv.ParseInt(text, 10, 64); err == nil {
			err = fill(path, n)
		}
	case "skills":
		err = listSkills(dir, path) // skills.go
	case "many":
		count, text, _ := strings.Cut(text, " ")
		var n int
		if n, err = strconv.Atoi(count); err == nil {
			err = os.MkdirAll(path, 0o755)
		}
		for i := 1; i <= n && err == nil; i++ {
			err = os.WriteFile(filepath.Join(path, fmt.Sprintf("f%04d.txt", i)), []byte(fmt.Sprintf("%s %d\n", text, i)), 0o644)
		}
	case "output":
		var f *os.File
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			if err = unix.Dup2(int(f.Fd()), 1); err == nil {
				err = unix.Dup2(int(f.Fd()), 2)
			}
			f.Close()
		}
	case "exit":
		code, cerr := strconv.Atoi(arg)
		if cerr != nil {
			fmt.Fprintf(os.Stderr, "standin: %s: %v\n", line, cerr)
			return 1, true
		}
		return code, true
	default:
		err = fmt.Errorf("unknown action")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "standin: %s: %v\n", line, err)
	}
	return 0, false
}

// appendLine appends line and a newline to the file path.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fill writes n bytes of numbered lines to path.
func fill(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := int64(0); n > 0; i++ {
		line := fmt.Sprintf("%012d filler line of the stand-in\n", i)
		if int64(len(line)) > n {
			line = line[:n]
		}
		w.WriteString(line)
		n -= int64(len(line))
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// roleEnv, when set, makes the stand-in a part of a daemon (the daemon
// action) instead of a harness.
const roleEnv = "STANDIN_ROLE"

// daemon leaves a process behind as a daemon does (the daemon action):
// it starts the stand-in in a session of its own as the daemon's parent,
// which starts the daemon and exits at once, and waits until the daemon
// wrote its process id to pidfile.
func daemon(pidfile, mode string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"=daemon-parent", "STANDIN_DAEMON_PIDFILE="+pidfile,
		"STANDIN_DAEMON_MODE="+mode, "STANDIN_DAEMON_TARGET="+strconv.Itoa(os.Getppid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Run(); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(pidfile); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s did not appear within 30 s", pidfile)
}

// daemonRole is the stand-in as the daemon's parent (it starts the
// daemon and exits) or as the daemon.
func daemonRole(role string) int {
	if role == "daemon-parent" {
		exe, err := os.Executable()
		if err != nil {
			fail("%v", err)
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), roleEnv+"=daemon")
		if err := cmd.Start(); err != nil {
			fail("%v", err)
		}
		return 0
	}
	mode := os.Getenv("STANDIN_DAEMON_MODE")
	switch mode {
	case "stubborn", "stopparent":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
	case "mark":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		go func() {
			<-ch
			os.WriteFile("left.txt", []byte("written by a leftover as it was ended\n"), 0o644)
			os.Exit(0)
		}()
	}
	pidfile := os.Getenv("STANDIN_DAEMON_PIDFILE")
	tmp := pidfile + ".tmp"
	if err := os.WriteFile(tmp, pidLine(os.Getpid()), 0o644); err != nil {
		fail("%v", err)
	}
	if err := os.Rename(tmp, pidfile); err != nil {
		fail("%v", err)
	}
	target, _ := strconv.Atoi(os.Getenv("STANDIN_DAEMON_TARGET"))
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if mode == "stopparent" && target > 1 {
			if err := syscall.Kill(target, syscall.SIGSTOP); errors.Is(err, syscall.ESRCH) {
				return 0
			}
		}
	}
	return 0
}

// pidLine is a process id as the stand-in writes it to a file: the id,
// and the PID namespace it is an id of (/proc/self/ns/pid, "pid:[N]"),
// since a harness in namespaces of its own (confine.Policy.Net) sees the
// ids of its namespace, which the tests translate to the host's.
func pidLine(pid int) []byte {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return []byte(strings.TrimSpace(strconv.Itoa(pid)+" "+ns) + "\n")
}
