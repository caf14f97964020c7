package proctree

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	rest := " 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100\n"
	tests := []struct {
		name string
		line string
		want Proc
		ok   bool
	}{
		{"plain", "42 (sleep) S 7" + rest, Proc{PPID: 7, State: 'S', Comm: "sleep", Start: 98765}, true},
		{"a name with parentheses and spaces", "42 (a) Z 1 (b) T 9" + rest, Proc{PPID: 9, State: 'T', Comm: "a) Z 1 (b", Start: 98765}, true},
		{"an empty name", "42 () R 3" + rest, Proc{PPID: 3, State: 'R', Start: 98765}, true},
		{"no name", "42 sleep S 7" + rest, Proc{}, false},
		{"cut short", "42 (sleep) S 7 1 1", Proc{}, false},
		{"a state of two letters", "42 (sleep) SS 7" + rest, Proc{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tt.line))
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParseStat: whatever the name, the fields after it are read right.
func FuzzParseStat(f *testing.F) {
	f.Add("sleep", uint64(5))
	f.Add("a) T 1 (b", uint64(0))
	f.Add(")(", uint64(1<<40))
	f.Fuzz(func(t *testing.T, comm string, start uint64) {
		if strings.ContainsAny(comm, "\n") {
			return
		}
		line := "42 (" + comm + ") S 7 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 " + strconv.FormatUint(start, 10) + " 1000 100\n"
		p, ok := parseStat([]byte(line))
		if !ok || p.Comm != comm || p.PPID != 7 || p.State != 'S' || p.Start != start {
			t.Errorf("parseStat(%q) = %+v, %v", line, p, ok)
		}
	})
}
