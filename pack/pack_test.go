package pack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const pkg = `{"name": "p", "version": "1.0.0"}`

func personaJSON(id, extra string) string {
	return `{"id": "` + id + `", "intent": "x", "description": "d", "tiers": {"best": {"harness": "claude", "model": "m"}}` + extra + `}`
}

// goNames matches what encoding/json says of Go's types, which errors
// must not show.
var goNames = regexp.MustCompile(`Go (struct|value)|of type |packageJSON|(^|[^.])json: `)

func TestCollectErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{name: "no package.json", files: map[string]string{"personas/a.json": personaJSON("a", "")}, want: "no package.json"},
		{name: "missing sidecar", files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", `, "claudeMd": "gone.md"`)}, want: "claudeMd: sidecar file not found: "},
		{name: "missing sidecar is an error, not an ignored field", files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", `, "claudeMd": "gone.md"`)},
			want: "gone.md; a persona that is packed or installed must carry every file it names"},
		{name: "unsafe sidecar", files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", `, "claudeMd": "../x.md"`)}, want: `leaves the persona's directory`},
		{name: "duplicate id", files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", ""), "personas/sub/b.json": personaJSON("a", "")}, want: `persona id "a" is also defined by`},
		{name: "duplicate file name", files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", ""), "personas/sub/a.json": personaJSON("b", "")}, want: "file name a.json is also used by"},
		{name: "persona dir escapes", files: map[string]string{"package.json": `{"name": "p", "version": "1", "agentworkforce": {"personas": "../x"}}`}, want: `leaves the pack`},
		{name: "version a number", files: map[string]string{"package.json": `{"name": "p", "version": 1}`}, want: "package.json:1:26: version: must be a string, not number"},
		{name: "name a list", files: map[string]string{"package.json": `{"name": [1], "version": "1"}`}, want: "package.json:1:10: name: must be a string, not array"},
		{name: "package.json a list", files: map[string]string{"package.json": `[]`}, want: "package.json:1:1: must be an object, not array"},
		{name: "agentworkforce a list", files: map[string]string{"package.json": `{"agentworkforce": []}`}, want: "package.json:1:20: agentworkforce: must be an object, not array"},
		{name: "persona dir a number", files: map[string]string{"package.json": "{\n \"agentworkforce\": {\"personas\": 5}}"}, want: "package.json:2:33: agentworkforce.personas: must be a string, not number"},
		{name: "package.json malformed", files: map[string]string{"package.json": `{"name": }`}, want: "package.json:1:10: invalid JSON: invalid character '}'"},
		{name: "no personas", files: map[string]string{"package.json": pkg, "personas/readme.md": "x"}, want: "no persona files"},
		{
			name:  "sidecar symlink leaving the pack",
			files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", `, "claudeMd": "link.md"`)},
			setup: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "o.md")
				os.WriteFile(outside, []byte("x"), 0o644)
				if err := os.Symlink(outside, filepath.Join(dir, "personas/link.md")); err != nil {
					t.Fatal(err)
				}
			},
			want: "outside the persona directory",
		},
		{
			name:  "persona symlink leaving the pack",
			files: map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", "")},
			setup: func(t *testing.T, dir string) {
				outside := filepath.Join(t.TempDir(), "b.json")
				os.WriteFile(outside, []byte(personaJSON("b", "")), 0o644)
				if err := os.Symlink(outside, filepath.Join(dir, "personas/b.json")); err != nil {
					t.Fatal(err)
				}
			},
			want: "a symlink leaving the pack directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			_, err := Collect(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Collect() error = %v, want %q", err, tt.want)
			}
			if err != nil && goNames.MatchString(err.Error()) {
				t.Errorf("Collect() error = %v, names Go's types", err)
			}
		})
	}
}

func TestWriteIsReproducible(t *testing.T) {
	dir := writeTree(t, map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", `, "claudeMd": "a.md"`), "personas/a.md": "A"})
	var one, two bytes.Buffer
	for _, b := range []*bytes.Buffer{&one, &two} {
		p, err := Collect(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Write(b); err != nil {
			t.Fatal(err)
		}
		// A later modification time must not change the bytes.
		later := ModTime.AddDate(30, 0, 0)
		os.Chtimes(filepath.Join(dir, "personas/a.md"), later, later)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatal("two packs of the same content differ")
	}
	gz, _ := gzip.NewReader(bytes.NewReader(one.Bytes()))
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(ModTime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Mode != 0o644 {
			t.Errorf("%s: header %+v not normalized", h.Name, h)
		}
	}
	if got := strings.Join(names, " "); got != "package/package.json package/personas/a.json package/personas/a.md" {
		t.Errorf("entries = %s", got)
	}
}

// archive builds a gzip'd tar from headers; regular files get their name
// as content.
func archive(t testing.TB, hdrs ...*tar.Header) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, h := range hdrs {
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(h.Name))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name)[:h.Size])
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestReadArchiveRejects(t *testing.T) {
	reg := func(name string) *tar.Header { return &tar.Header{Typeflag: tar.TypeReg, Name: name} }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"absolute path", archive(t, reg("/etc/passwd")), "absolute or unsafe path"},
		{"dot-dot", archive(t, reg("package/../../x")), `leaves the archive with ".."`},
		{"outside package/", archive(t, reg("other/x")), "outside package/"},
		{"symlink", archive(t, &tar.Header{Typeflag: tar.TypeSymlink, Name: "package/l", Linkname: "/etc"}), "is a link"},
		{"hard link", archive(t, &tar.Header{Typeflag: tar.TypeLink, Name: "package/l", Linkname: "package/x"}), "is a link"},
		{"device", archive(t, &tar.Header{Typeflag: tar.TypeChar, Name: "package/dev"}), "not a regular file"},
		{"fifo", archive(t, &tar.Header{Typeflag: tar.TypeFifo, Name: "package/fifo"}), "not a regular file"},
		{"not gzip", []byte("plain"), "not a gzip'd tarball"},
		{"no package dir", archive(t), "no package/ directory"},
		{"duplicate entry", archive(t, reg("package/a"), reg("package/a")), "file exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := ReadArchive(bytes.NewReader(tt.data), dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadArchive() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReadArchiveLimits(t *testing.T) {
	defer func(b int64, e int) { MaxBytes, MaxEntries = b, e }(MaxBytes, MaxEntries)
	MaxBytes, MaxEntries = 1<<20, 3
	var hdrs []*tar.Header
	for _, n := range []string{"package/a", "package/b", "package/c", "package/d"} {
		hdrs = append(hdrs, &tar.Header{Typeflag: tar.TypeReg, Name: n})
	}
	if _, err := ReadArchive(bytes.NewReader(archive(t, hdrs...)), t.TempDir()); err == nil || !strings.Contains(err.Error(), "more than 3 entries") {
		t.Errorf("entry cap: error = %v", err)
	}
	MaxBytes = 100
	big := &tar.Header{Typeflag: tar.TypeReg, Name: "package/" + strings.Repeat("x", 150)}
	if _, err := ReadArchive(bytes.NewReader(archive(t, big)), t.TempDir()); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("size cap: error = %v", err)
	}
}

// FuzzReadArchive checks that no archive makes ReadArchive panic or write
// outside its directory.
func FuzzReadArchive(f *testing.F) {
	f.Add(archive(f, &tar.Header{Typeflag: tar.TypeReg, Name: "package/a.json"}))
	f.Add(archive(f, &tar.Header{Typeflag: tar.TypeReg, Name: "package/../x"}))
	f.Add(archive(f, &tar.Header{Typeflag: tar.TypeSymlink, Name: "package/l", Linkname: "../../"}))
	f.Add(archive(f, &tar.Header{Typeflag: tar.TypeReg, Name: "./plugin/agents/a.md"}))
	f.Add(archive(f, &tar.Header{Typeflag: tar.TypeReg, Name: "/etc/x"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Both readers: npm's layout, and any top directory (a plugin's).
		for _, read := range []func(io.Reader, string) (string, error){ReadArchive, ReadAnyArchive} {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			os.Mkdir(dir, 0o755)
			root, err := read(bytes.NewReader(data), dir)
			entries, _ := os.ReadDir(parent)
			if len(entries) != 1 {
				t.Fatalf("the reader wrote outside its directory: %v", entries)
			}
			if err == nil && !pathutil.Within(dir, root) {
				t.Fatalf("the root %s is outside %s", root, dir)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type()&os.ModeSymlink != 0 {
					t.Fatalf("the reader made a symlink: %s", p)
				}
				return nil
			})
		}
	})
}
