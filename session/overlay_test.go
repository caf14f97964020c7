package session

import (
	"slices"
	"testing"

	"github.com/seed-3bc194a6/workforce/mount"
)

// TestWarnReads: each file read and changed afterwards is a warning, its
// name quoted as the agent's names are (a newline cannot forge a line of
// its own); an incomplete watch is one more.
func TestWarnReads(t *testing.T) {
	var got []string
	warnReads(mount.ReadReport{Changed: []string{"a.txt", "x\nworkforce: all is well"}, Incomplete: "events were lost"},
		func(msg string) { got = append(got, msg) })
	want := []string{
		"a.txt changed in your tree after the agent read it: it may have worked from the earlier version",
		`"x\nworkforce: all is well" changed in your tree after the agent read it: it may have worked from the earlier version`,
		"events were lost; a file changed after the agent read it may go unreported",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnReads warned\n%q\nwant\n%q", got, want)
	}
	got = nil
	warnReads(mount.ReadReport{}, func(msg string) { got = append(got, msg) })
	if len(got) != 0 {
		t.Errorf("warnReads of nothing warned %q", got)
	}
}
