package main

import (
	"io"
	"strings"
	"testing"
)

func TestInterspersed(t *testing.T) {
	app := newApp(io.Discard, io.Discard)
	tests := []struct{ in, want string }{
		{"workforce show x --json", "workforce show --json x"},
		{"workforce show --json x", "workforce show --json x"},
		{"workforce context --harness claude --json", "workforce context --harness claude --json"},
		{"workforce context dir --harness claude", "workforce context --harness claude dir"},
		{"workforce context resolve a b --state f --json", "workforce context resolve --state f --json a b"},
		{"workforce sources add d --first", "workforce sources add --first d"},
		{"workforce --help list", "workforce --help list"},
		{"workforce show x -- --json", "workforce show x -- --json"},
		{"workforce unknown --x y", "workforce unknown --x y"},
	}
	for _, tt := range tests {
		got := strings.Join(interspersed(app, strings.Fields(tt.in)), " ")
		if got != tt.want {
			t.Errorf("interspersed(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
