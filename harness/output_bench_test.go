package harness

import (
	"fmt"
	"strings"
	"testing"
)

// The start and the end of a codex agent message line.
const (
	messageHead = `{"type":"item.completed","item":{"type":"agent_message","text":"`
	messageTail = "\"}}\n"
)

// longLine returns a codex agent message of n bytes, its newline
// included.
func longLine(n int) []byte {
	return []byte(messageHead + strings.Repeat("x", n-len(messageHead)-len(messageTail)) + messageTail)
}

// BenchmarkOutputWriterLongLine writes one line of 1, 4, 16 and 64 MiB to
// the OutputWriter in the 32 KiB pieces the harness's pipe gives it
// (os/exec copies with a 32 KiB buffer): the time must grow linearly
// with the line's length; B/byte is the memory allocated per byte of
// output.
func BenchmarkOutputWriterLongLine(b *testing.B) {
	for _, mib := range []int{1, 4, 16, 64} {
		line := longLine(mib << 20)
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			var alloc uint64
			for b.Loop() {
				w, err := NewOutputWriter("codex", nil)
				if err != nil {
					b.Fatal(err)
				}
				before := allocated()
				for p := line; len(p) > 0; {
					n := min(len(p), 32<<10)
					w.Write(p[:n])
					p = p[n:]
				}
				w.Finish()
				alloc += allocated() - before
			}
			b.ReportMetric(float64(alloc)/float64(b.N)/float64(len(line)), "B/byte")
		})
	}
}
