package run

import "testing"

// TestGetenv: a variable of the environment as os.Getenv gives it: the
// first of a name wins, a name is matched whole, an unset one is empty.
func TestGetenv(t *testing.T) {
	e := Env{Environ: []string{"A=1", "AB=2", "A=3", "EMPTY=", "NOEQ"}}
	tests := []struct{ name, want string }{
		{"A", "1"},
		{"AB", "2"},
		{"EMPTY", ""},
		{"NOEQ", ""},
		{"B", ""},
	}
	for _, tt := range tests {
		if got := e.Getenv(tt.name); got != tt.want {
			t.Errorf("Getenv(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
