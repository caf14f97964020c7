package pack

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFile: the tarball lands whole in a directory made for it, as
// Write makes it, mode 0644, replacing a file there; a pack that cannot
// be written leaves the file there as it was and nothing beside it.
func TestWriteFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"package.json": pkg, "personas/a.json": personaJSON("a", "")})
	p, err := Collect(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := p.Write(&want); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist", "new", "p.tgz")
	unnamed := *p
	unnamed.Name = ""
	tests := []struct {
		name    string
		pack    *Pack
		before  string // the file's content before; "" for none
		want    []byte
		wantErr bool
	}{
		{"a new directory", p, "", want.Bytes(), false},
		{"replaced", p, "old", want.Bytes(), false},
		{"not written", &unnamed, "old", []byte("old"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(filepath.Dir(out))
			if tt.before != "" {
				if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(out, []byte(tt.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := tt.pack.WriteFile(out)
			if (err != nil) != tt.wantErr {
				t.Fatalf("WriteFile: %v, want an error: %v", err, tt.wantErr)
			}
			got, err := os.ReadFile(out)
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("%s holds %d bytes (%v), want %d", out, len(got), err, len(tt.want))
			}
			if fi, err := os.Stat(out); err == nil && !tt.wantErr && fi.Mode().Perm() != 0o644 {
				t.Errorf("%s has mode %v, want 0644", out, fi.Mode().Perm())
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 1 {
				t.Errorf("%s holds %d entries, want the tarball alone", filepath.Dir(out), len(entries))
			}
		})
	}
}
