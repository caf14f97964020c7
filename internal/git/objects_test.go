package git

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestBlobName: the name is git's, for both object formats.
func TestBlobName(t *testing.T) {
	needGit(t)
	for _, format := range []string{"sha1", "sha256"} {
		repo := t.TempDir()
		run(t, repo, "init", "-q", "--object-format="+format)
		for _, content := range []string{"", "a\n", "\x00\x01binary\xff", strings.Repeat("long line\n", 10000)} {
			must(t, os.WriteFile(filepath.Join(repo, "f"), []byte(content), 0o644))
			want := strings.TrimSpace(run(t, repo, "hash-object", "--no-filters", "f"))
			got, err := BlobName(want, strings.NewReader(content), int64(len(content)))
			if err != nil || got != want {
				t.Errorf("%s: BlobName(%.20q) = %s, %v; want %s", format, content, got, err, want)
			}
		}
	}
	if _, err := BlobName("abc", strings.NewReader(""), 0); err == nil {
		t.Error("BlobName with no object format: no error")
	}
	if _, err := BlobName(strings.Repeat("a", 40), strings.NewReader("ab"), 3); err == nil {
		t.Error("BlobName of a short read: no error")
	}
}

// TestStoredIn: a store holds its loose objects and those of its packs,
// not those of its alternates; a store that is a link holds nothing.
func TestStoredIn(t *testing.T) {
	needGit(t)
	real := t.TempDir()
	run(t, real, "init", "-q", "-b", "main")
	run(t, real, "commit", "-q", "--allow-empty", "-m", "real")
	realCommit := strings.TrimSpace(run(t, real, "rev-parse", "HEAD"))

	box := t.TempDir()
	run(t, box, "init", "-q", "-b", "main")
	objects := filepath.Join(box, ".git", "objects")
	must(t, os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(filepath.Join(real, ".git", "objects")+"\n"), 0o644))
	run(t, box, "update-ref", "HEAD", realCommit)
	run(t, box, "commit", "-q", "--allow-empty", "-m", "packed")
	packed := strings.TrimSpace(run(t, box, "rev-parse", "HEAD"))
	run(t, box, "repack", "-q", "-a", "-d", "-l")
	run(t, box, "commit", "-q", "--allow-empty", "-m", "loose")
	loose := strings.TrimSpace(run(t, box, "rev-parse", "HEAD"))
	if n := run(t, box, "rev-list", "--count", "HEAD"); strings.TrimSpace(n) != "3" {
		t.Fatalf("the sandbox sees %s commits, want 3", n)
	}
	if idx, _ := filepath.Glob(filepath.Join(objects, "pack", "*.idx")); len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}

	missing := strings.Repeat("0", 40)
	got, err := StoredIn(objects, []string{realCommit, packed, loose, missing, "nonsense"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{packed: true, loose: true}; !equal(got, want) {
		t.Errorf("StoredIn = %v, want %v (real %s)", got, want, realCommit)
	}

	link := filepath.Join(t.TempDir(), "objects")
	must(t, os.Symlink(objects, link))
	if got, err := StoredIn(link, []string{packed, loose}); err != nil || len(got) != 0 {
		t.Errorf("StoredIn(a link) = %v, %v; want nothing", got, err)
	}
	if got, err := StoredIn(filepath.Join(box, "nothing"), []string{loose}); err != nil || len(got) != 0 {
		t.Errorf("StoredIn(no store) = %v, %v; want nothing", got, err)
	}

	// A version 1 index lists the same objects.
	v1 := t.TempDir()
	run(t, v1, "init", "-q", "--bare")
	pack := strings.TrimSpace(gitIn(t, box, []byte(packed+"\n"), "pack-objects", "--index-version=1", filepath.Join(v1, "objects", "pack", "p")))
	if _, err := os.Stat(filepath.Join(v1, "objects", "pack", "p-"+pack+".idx")); err != nil {
		t.Fatal(err)
	}
	if got, err := StoredIn(filepath.Join(v1, "objects"), []string{packed, loose}); err != nil || !equal(got, map[string]bool{packed: true}) {
		t.Errorf("StoredIn(version 1 index) = %v, %v; want %s", got, err, packed)
	}
}

// gitIn runs git in dir with stdin, for a test.
func gitIn(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := Repo{Dir: dir, Trust: Trusted}.Run(context.Background(), stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func equal(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// index returns a version 2 pack index of the names (SHA-1), or a
// version 1 one.
func index(names [][]byte, v1 bool) []byte {
	sort.Slice(names, func(i, j int) bool { return bytes.Compare(names[i], names[j]) < 0 })
	var b bytes.Buffer
	if !v1 {
		b.WriteString("\xfftOc")
		binary.Write(&b, binary.BigEndian, uint32(2))
	}
	for i := range 256 {
		n := 0
		for _, name := range names {
			if int(name[0]) <= i {
				n++
			}
		}
		binary.Write(&b, binary.BigEndian, uint32(n))
	}
	for i, name := range names {
		if v1 {
			binary.Write(&b, binary.BigEndian, uint32(i))
		}
		b.Write(name)
	}
	return b.Bytes()
}

// FuzzPackHas: any bytes as an index never panic, and an index made of
// names lists exactly those.
func FuzzPackHas(f *testing.F) {
	f.Add([]byte("\xfftOc\x00\x00\x00\x02"), []byte("a"), false)
	f.Add([]byte{}, []byte("abc"), true)
	f.Add(index([][]byte{bytes.Repeat([]byte{1}, 20)}, false), []byte("b"), false)
	f.Fuzz(func(t *testing.T, idx, seed []byte, v1 bool) {
		raw := sha1.Sum(seed)
		packHas(idx, raw[:]) // any bytes: no panic
		other := sha1.Sum(append(seed, 'x'))
		names := [][]byte{raw[:]}
		for i := range min(len(idx), 5) {
			n := sha1.Sum([]byte{idx[i], byte(i)})
			names = append(names, n[:])
		}
		made := index(names, v1)
		if ok, err := packHas(made, raw[:]); !ok || err != nil {
			t.Errorf("packHas(index with it) = %v, %v", ok, err)
		}
		if ok, err := packHas(made, other[:]); ok || err != nil {
			t.Errorf("packHas(index without it) = %v, %v", ok, err)
		}
	})
}
