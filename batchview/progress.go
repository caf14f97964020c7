package batchview

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// Progress is the progress of one unattended run on a terminal (run
// PERSONA TASK with stderr on one): a line an event (the harness's
// session, each tool call, the first line of what the agent says, what
// came back: report.Event.ProgressText), each with the time since the run
// started, and a line saying it is still running after each Silence
// without one. Plain lines, no cursor movement: they read the same in a
// terminal's scrollback and in a recording of it. The command prints none
// when stderr is not a terminal.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	start   time.Time
	last    time.Time
	silence time.Duration
	stop    chan struct{}
	done    chan struct{}
}

// Silence is how long a run may show nothing before a line says it is
// still running.
const Silence = time.Minute

// StartProgress starts the progress, on w, of a run that starts now;
// silence is Silence but in tests. Stop ends it.
func StartProgress(w io.Writer, silence time.Duration) *Progress {
	now := time.Now()
	p := &Progress{w: w, start: now, last: now, silence: silence, stop: make(chan struct{}), done: make(chan struct{})}
	go p.heartbeat()
	return p
}

// Event prints the line of e, if it has one. It may be called from
// several goroutines.
func (p *Progress) Event(e report.Event) {
	if text, ok := e.ProgressText(); ok {
		p.line(text)
	}
}

func (p *Progress) line(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = time.Now()
	fmt.Fprintf(p.w, "workforce: %s %s\n", Elapsed(p.last.Sub(p.start)), text)
}

// heartbeat says the run is still running after each silence without a
// line.
func (p *Progress) heartbeat() {
	defer close(p.done)
	t := time.NewTicker(p.silence / 4)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			quiet := now.Sub(p.last) >= p.silence
			p.mu.Unlock()
			if quiet {
				p.line("still running")
			}
		}
	}
}

// Stop ends the progress: no line comes after it returns.
func (p *Progress) Stop() {
	close(p.stop)
	<-p.done
}

// Elapsed is d as M:SS (H:MM:SS past an hour).
func Elapsed(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
