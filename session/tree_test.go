package session

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// indexHeader is a git index header of version v with n entries.
func indexHeader(v, n uint32) []byte {
	h := []byte("DIRC\x00\x00\x00\x00\x00\x00\x00\x00")
	binary.BigEndian.PutUint32(h[4:], v)
	binary.BigEndian.PutUint32(h[8:], n)
	return h
}

func TestParseIndexHeader(t *testing.T) {
	tests := []struct {
		name string
		h    []byte
		want int
		ok   bool
	}{
		{"version 2", indexHeader(2, 20000), 20000, true},
		{"version 4, empty", indexHeader(4, 0), 0, true},
		{"version 3 with entries after", append(indexHeader(3, 7), "entries"...), 7, true},
		{"version 1", indexHeader(1, 5), 0, false},
		{"version 5", indexHeader(5, 5), 0, false},
		{"short", indexHeader(2, 5)[:11], 0, false},
		{"not DIRC", append([]byte("DIRX"), indexHeader(2, 5)[4:]...), 0, false},
		{"empty", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseIndexHeader(tt.h)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("parseIndexHeader(%q) = %d, %v, want %d (ok %v)", tt.h, got, err, tt.want, tt.ok)
			}
		})
	}
}

// FuzzParseIndexHeader: any bytes give a count and no error only for a
// header that says DIRC, a version 2 to 4, and that count.
func FuzzParseIndexHeader(f *testing.F) {
	f.Add(indexHeader(2, 3))
	f.Add(indexHeader(4, 1<<31))
	f.Add([]byte("DIRC"))
	f.Fuzz(func(t *testing.T, h []byte) {
		n, err := parseIndexHeader(h)
		if err != nil {
			if n != 0 {
				t.Fatalf("parseIndexHeader(%q) = %d with error %v", h, n, err)
			}
			return
		}
		if len(h) < 12 || string(h[:4]) != "DIRC" || n != int(binary.BigEndian.Uint32(h[8:12])) {
			t.Fatalf("parseIndexHeader(%q) = %d, want an error or the header's count", h, n)
		}
		if v := binary.BigEndian.Uint32(h[4:8]); v < 2 || v > 4 {
			t.Fatalf("parseIndexHeader(%q) accepted version %d", h, v)
		}
	})
}

// TestTreeLarger: the index's count decides where there is one (a tree
// of three files whose index says 6000 entries is large), a bounded look
// where there is none, a linked worktree's .git file is followed.
func TestTreeLarger(t *testing.T) {
	root := t.TempDir()
	for i := range 3 {
		mustWrite(t, filepath.Join(root, fmt.Sprintf("d/f%d", i)), "x")
	}
	if large, err := treeLarger(root, 3); err != nil || !large {
		t.Errorf("treeLarger(4 entries, 3) = %v, %v, want true", large, err)
	}
	if large, err := treeLarger(root, 4); err != nil || large {
		t.Errorf("treeLarger(4 entries, 4) = %v, %v, want false", large, err)
	}
	if got := countBounded(root, 2); got != 2 {
		t.Errorf("countBounded(4 entries, 2) = %d, want 2", got)
	}
	mustWrite(t, filepath.Join(root, ".git/index"), string(indexHeader(2, 6000)))
	if large, err := treeLarger(root, AutoThreshold); err != nil || !large {
		t.Errorf("treeLarger with an index of 6000 entries = %v, %v, want true", large, err)
	}
	wt := t.TempDir()
	mustWrite(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(root, ".git")+"\n")
	if large, err := treeLarger(wt, AutoThreshold); err != nil || !large {
		t.Errorf("treeLarger of a worktree whose index has 6000 entries = %v, %v, want true", large, err)
	}
	mustWrite(t, filepath.Join(root, ".git/index"), string(indexHeader(2, 10)))
	if large, _ := treeLarger(root, AutoThreshold); large {
		t.Errorf("treeLarger with an index of 10 entries = true, want false")
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
