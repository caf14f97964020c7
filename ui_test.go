package main

import (
	"strings"
	"testing"
)

// TestMessagesEscape: errors, warnings and hints print what does not print
// as itself escaped; an error of several lines is several error lines, and
// a hint or warning is always one line.
func TestMessagesEscape(t *testing.T) {
	tests := []struct {
		name  string
		print func(*strings.Builder)
		want  string
	}{
		{"error", func(b *strings.Builder) { errorf(b, "cannot write %s back", "a\x1b[2Jb") },
			"workforce: error: cannot write a\\033[2Jb back\n"},
		{"joined error", func(b *strings.Builder) { errorf(b, "%s", "x.json: bad\ny.json: bad\x07") },
			"workforce: error: x.json: bad\nworkforce: error: y.json: bad\\a\n"},
		{"error with blank lines", func(b *strings.Builder) { errorf(b, "%s", "git clone: fatal: no\n\nmore\n") },
			"workforce: error: git clone: fatal: no\nworkforce: error: more\n"},
		{"warning", func(b *strings.Builder) { warnf(b, "kept %s", "a\nworkforce: hint: run this") },
			"workforce: warning: kept a\\nworkforce: hint: run this\n"},
		{"hint", func(b *strings.Builder) { hintf(b, "see %s", "\xff\u202e") },
			"workforce: hint: see \\377\\342\\200\\256\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.print(&b)
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}
