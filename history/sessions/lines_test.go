package sessions

import (
	"strings"
	"testing"
)

func TestEachLine(t *testing.T) {
	defer func(n int) { maxLine = n }(maxLine)
	maxLine = 100
	long := strings.Repeat("x", 101)
	fits := strings.Repeat("y", 100)
	huge := strings.Repeat("z", 200<<10) // over the reader's buffer
	for _, c := range []struct {
		name, in string
		want     []string
		long     int
	}{
		{"empty", "", nil, 0},
		{"lines", "a\nb\n", []string{"a", "b"}, 0},
		{"no final line feed", "a\nb", []string{"a", "b"}, 0},
		{"blank lines", "\n  \na\n\n", []string{"a"}, 0},
		{"a line at the limit", fits + "\n", []string{fits}, 0},
		{"a line over the limit", "a\n" + long + "\nb\n", []string{"a", "b"}, 1},
		{"a line over the buffer", "a\n" + huge + "\nb", []string{"a", "b"}, 1},
		{"the last line over the limit", "a\n" + huge, []string{"a"}, 1},
		{"a carriage return stays", "a\r\n", []string{"a\r"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			n, err := eachLine(strings.NewReader(c.in), func(l []byte) { got = append(got, string(l)) })
			if err != nil || n != c.long || strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("eachLine = %q, %d long, %v; want %q, %d", got, n, err, c.want, c.long)
			}
		})
	}
	t.Run("a long line within the limit", func(t *testing.T) {
		maxLine = 300 << 10
		var got []string
		n, err := eachLine(strings.NewReader("a\n"+huge+"\nb"), func(l []byte) { got = append(got, string(l)) })
		if err != nil || n != 0 || len(got) != 3 || got[1] != huge {
			t.Errorf("eachLine read %d lines, %d long, %v; want 3 with the long one whole", len(got), n, err)
		}
	})
}
