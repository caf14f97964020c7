package history

import (
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"90m", 90 * time.Minute, false},
		{"1h30m", 90 * time.Minute, false},
		{"7d", 7 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"0", 0, true},
		{"0d", 0, true},
		{"-1h", 0, true},
		{"-2d", 0, true},
		{"d", 0, true},
		{"NaNd", 0, true},
		{"1e9d", 0, true},
		{"7", 0, true},
		{"", 0, true},
	} {
		got, err := ParseSince(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseSince(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}
