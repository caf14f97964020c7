package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// ParentDeathSignal is the signal a task's run gets when the pool dies
// without passing a signal on (Linux: parentDeathSignal). It is the
// session package's ParentDeathSignal, which run takes once, as SIGTERM,
// however many times the kernel sends it; a test of the command layer
// checks that the two agree (this package may not import session).
const ParentDeathSignal = syscall.SIGUSR1

// Command is the process that runs task t as a one-shot run: the
// workforce binary exe as `run PERSONA - --events`, with the task's
// harness, model, inputs, timeout and network (--network-narrow) as flags, in the task's directory (dir, the
// task's ProjectDir) and with the task text on stdin (so that a task that
// reads as a flag stays a task). The child is the leader of a process
// group of its own: a terminal's Ctrl-C reaches the pool alone, which
// passes a signal on (Pool.Signal). On Linux it gets ParentDeathSignal when
// the pool dies without passing one on (parentDeathSignal).
func Command(exe string, t Task, dir string) *exec.Cmd {
	args := []string{"run", t.Persona, "-", "--events"}
	if t.Harness != "" {
		args = append(args, "--harness", t.Harness)
	}
	if t.Model != "" {
		args = append(args, "--model", t.Model)
	}
	keys := make([]string, 0, len(t.Inputs))
	for k := range t.Inputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, "--input", k+"="+t.Inputs[k])
	}
	if t.Timeout != "" {
		args = append(args, "--timeout", t.TimeoutDuration().String())
	}
	if t.Network != nil {
		// Narrowing only: the child's own config.json and flags stay the
		// user's word.
		b, _ := json.Marshal(t.Network)
		args = append(args, "--network-narrow", string(b))
	}
	if t.Attempt != nil {
		b, _ := json.Marshal(t.Attempt)
		args = append(args, "--attempt", string(b))
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(t.Task)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(cmd)
	return cmd
}

// Outcome is how one task's run ended.
type Outcome struct {
	// Result is the run's result, with the task's id; nil when the run
	// printed none (it never started).
	Result *report.Result
	// Status is the result's, or failed when there is none (interrupted
	// when the pool was stopping).
	Status report.Status
	// ExitCode is the child's exit status (128+n for a signal n).
	ExitCode int
	// Error says why there is no result: the end of the child's stderr,
	// or why it could not start.
	Error             string
	Started, Finished time.Time
}

// Duration is the run's wall time.
func (o Outcome) Duration() time.Duration { return o.Finished.Sub(o.Started) }

// RunTask runs cmd (Command) to its end: it passes each event the child
// prints to onEvent (nil: none) and to events (nil: none) as the line it
// was, its stderr to stderr, and returns the outcome. started is called
// with the process once it runs. The calling goroutine stays locked to
// its thread until the child ends (parentDeathSignal).
//
// When events or stderr is a file, the child writes to it itself, and
// RunTask follows the events file as it grows: a pipe would die with the
// pool, and the child with it (SIGPIPE) on its next line, where a file
// lets a child whose pool was killed finish its sync-back.
func RunTask(cmd *exec.Cmd, taskID string, events, stderr io.Writer, onEvent func(report.Event), started func(*os.Process)) Outcome {
	o := Outcome{Started: time.Now()}
	tail := &tailWriter{}
	errFile, _ := stderr.(*os.File)
	switch {
	case errFile != nil:
		cmd.Stderr = errFile
	case stderr != nil:
		cmd.Stderr = io.MultiWriter(stderr, tail)
	default:
		cmd.Stderr = tail
	}
	// The thread that starts the child must live until the child ends
	// (parentDeathSignal).
	defer lockThread()()
	var out io.Reader
	var err error
	evFile, _ := events.(*os.File)
	if evFile != nil {
		cmd.Stdout = evFile
	} else {
		out, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		o.Finished, o.Status, o.ExitCode, o.Error = time.Now(), report.StatusFailed, 1, "cannot start the run: "+err.Error()
		return o
	}
	if started != nil {
		started(cmd.Process)
	}
	line := func(line []byte) {
		if evFile == nil && events != nil {
			events.Write(append(line, '\n'))
		}
		var e report.Event
		if json.Unmarshal(line, &e) != nil {
			return
		}
		e.TaskID = taskID
		if e.Type == report.EventFinished && e.Result != nil {
			r := *e.Result
			r.TaskID = taskID
			o.Result = &r
			e.Result = &r
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	if evFile != nil {
		exited := make(chan struct{})
		go func() {
			err = cmd.Wait()
			close(exited)
		}()
		follow(evFile.Name(), exited, line)
	} else {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line(sc.Bytes())
		}
		io.Copy(io.Discard, out)
		err = cmd.Wait()
	}
	o.Finished = time.Now()
	o.ExitCode = exitCode(cmd, err)
	if o.Result != nil {
		o.Status = o.Result.Status
		return o
	}
	if errFile != nil {
		tail.readEnd(errFile.Name())
	}
	o.Status = report.StatusFailed
	o.Error = tail.last()
	if o.Error == "" {
		o.Error = "the run printed no result"
		if err != nil {
			o.Error += " (" + err.Error() + ")"
		}
	}
	return o
}

// followEvery is how often follow looks for new lines while the child
// runs. The lines feed a display (and a worker's progress), for which a
// tenth of a second is soon enough; each look wakes the pool, and at 20 ms
// those wake-ups cost the pool a quarter more CPU (measured: 20 stand-in
// tasks of 1 s, --jobs 4). The last lines are read as soon as the child
// exits, whatever the interval.
const followEvery = 100 * time.Millisecond

// follow passes each line of the file at path to line as it is written,
// until exited is closed, then the rest of the file.
func follow(path string, exited <-chan struct{}, line func([]byte)) {
	f, err := os.Open(path)
	if err != nil {
		<-exited
		return
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var partial []byte
	for {
		var done bool
		select {
		case <-exited:
			done = true
		default:
		}
		for {
			b, err := r.ReadBytes('\n')
			partial = append(partial, b...)
			if err != nil {
				break
			}
			line(bytes.TrimSuffix(partial, []byte("\n")))
			partial = nil
		}
		if done {
			if len(partial) > 0 {
				line(partial)
			}
			return
		}
		select {
		case <-exited:
		case <-time.After(followEvery):
		}
	}
}

// exitCode is the child's exit status, 128+n when signal n killed it.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return 1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return cmd.ProcessState.ExitCode()
}

// tailWriter keeps the last lines written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 8192 {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-4096:]...)
	}
	return len(p), nil
}

// readEnd keeps the end of the file at path.
func (w *tailWriter) readEnd(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 4096 {
		f.Seek(fi.Size()-4096, io.SeekStart)
	}
	io.Copy(w, f)
}

// last is the last line that is not empty and not a hint (workforce:
// hint: ..., which follows the error it is about), else the last line.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(w.buf), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(string(lines[i]))
		if l != "" && !strings.HasPrefix(l, "workforce: hint:") {
			return l
		}
	}
	return strings.TrimSpace(string(lines[len(lines)-1]))
}

// Weight is how many slots a run of harness takes in the default number
// of jobs: opencode is CPU-bound (about a core per run, measured), claude,
// codex and gemini mostly wait on the model (gemini 0.61.0: 2.0 s of CPU
// in a 28 s run of four 5 s model turns, measured).
func Weight(harness string) int {
	if harness == "opencode" {
		return 2
	}
	return 1
}

// DefaultJobs is the number of tasks to run at once by default: twice the
// cores, divided by the weight of the heaviest harness among harnesses,
// at least 1 (on 2 cores: 4 claude or codex runs, 2 opencode runs).
func DefaultJobs(harnesses []string) int {
	w := 1
	for _, h := range harnesses {
		w = max(w, Weight(h))
	}
	return max(1, 2*runtime.NumCPU()/w)
}
