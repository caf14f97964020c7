package batchview

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/syncbuf"
	"github.com/seed-3bc194a6/workforce/report"
)

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 1499 * time.Millisecond: "0:01", 59 * time.Second: "0:59", 61 * time.Second: "1:01",
		59*time.Minute + 59*time.Second: "59:59", time.Hour + 2*time.Minute + 3*time.Second: "1:02:03",
	} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestProgressHeartbeat: events print as they come; a run that shows
// nothing for the silence gets a line saying it is still running; a usage
// event shows nothing.
func TestProgressHeartbeat(t *testing.T) {
	var buf syncbuf.Buffer
	p := StartProgress(&buf, 80*time.Millisecond)
	p.Event(report.Event{Type: report.EventToolUse, Tool: "Read", Detail: "a.go"})
	p.Event(report.Event{Type: report.EventUsage})
	time.Sleep(300 * time.Millisecond)
	p.Stop()
	out := buf.String()
	if !strings.HasPrefix(out, "workforce: 0:00 Read a.go\nworkforce: 0:00 still running\n") {
		t.Errorf("progress:\n%s", out)
	}
}
