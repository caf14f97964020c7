package harness

import (
	"runtime"
	"strings"
	"testing"
)

// allocated is the number of bytes the program has allocated so far.
func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// heapInUse is the size of the heap's objects, live or not yet collected.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestOutputWriterMemoryBounded writes a 64 MiB line, and 512 MiB of
// short lines, to the OutputWriter in the 32 KiB pieces a pipe gives it,
// and checks the heap every 4 MiB: it must stay within a few times the
// longest line read (MaxLine), whatever the output's size. The events
// must still all come, and the outcome be read.
func TestOutputWriterMemoryBounded(t *testing.T) {
	const bound = 40 << 20
	start := `{"type":"thread.started","thread_id":"t1"}` + "\n"
	end := `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}` + "\n"
	msg := `{"type":"item.completed","item":{"type":"agent_message","text":"hello"}}` + "\n"
	// 1,023 lines that are not events, then a message.
	block := msg + strings.Repeat("a line the harness prints as it goes, not one of its JSON events\n", 1023)
	const chunkSize = 32 << 10
	blocks := []byte(strings.Repeat(block, chunkSize/len(block)+2))
	xs := []byte(strings.Repeat("x", chunkSize))
	tests := []struct {
		name     string
		size     int
		fill     func(p []byte, at int) // p is the output from at on
		messages int
	}{
		{"a 64 MiB line", 64 << 20, func(p []byte, _ int) {
			copy(p, xs)
		}, 0},
		{"512 MiB of short lines", 512 << 20, func(p []byte, at int) {
			copy(p, blocks[at%len(block):])
		}, 512<<20/len(block) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			w, err := NewOutputWriter("codex", func(e Event) { got = append(got, e) })
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			base := heapInUse()
			w.Write([]byte(start))
			chunk := make([]byte, chunkSize)
			var peak uint64
			for at := 0; at < tt.size; at += len(chunk) {
				tt.fill(chunk, at)
				w.Write(chunk)
				if (at+len(chunk))%(4<<20) == 0 {
					h := heapInUse()
					if h > base+bound {
						t.Fatalf("after %d MiB of output the heap holds %d MiB more than before, want at most %d MiB",
							(at+len(chunk))>>20, (h-base)>>20, bound>>20)
					}
					peak = max(peak, h-min(h, base))
				}
			}
			w.Write([]byte("\n" + end))
			out, err := w.Finish()
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			t.Logf("the heap held at most %.1f MiB more than before", float64(peak)/(1<<20))
			if out.SessionID != "t1" || out.Usage.Output != 2 {
				t.Errorf("outcome %+v, want session t1 and 2 output tokens", out)
			}
			messages := 0
			for _, e := range got {
				if e.Type == EventMessage {
					messages++
				}
			}
			if messages != tt.messages {
				t.Errorf("%d message events passed on, want %d", messages, tt.messages)
			}
		})
	}
}
