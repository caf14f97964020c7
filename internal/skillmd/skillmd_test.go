package skillmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(data), 0o644))
}

func TestValidateSkillName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{name: "review"},
		{name: "go-tests-2"},
		{name: strings.Repeat("a", 64)},
		{name: "", wantErr: "is empty"},
		{name: strings.Repeat("a", 65), wantErr: "the limit is 64"},
		{name: "Review", wantErr: `holds 'R'`},
		{name: "go_tests", wantErr: `holds '_'`},
		{name: "go.tests", wantErr: `holds '.'`},
		{name: "é", wantErr: `holds 'é'`},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ValidateName(%q) = %v, want error containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestParse(t *testing.T) {
	long := strings.Repeat("d", MaxDescription)
	tests := []struct {
		name     string
		data     string
		want     Meta
		wantErrs []string // each "line: message substring"
	}{
		{name: "valid", data: "---\nname: review\ndescription: Reviews a change.\n---\n\nBody.\n",
			want: Meta{Name: "review", Description: "Reviews a change.", NameLine: 2, DescriptionLine: 3}},
		{name: "CRLF, BOM, other keys", data: "\xef\xbb\xbf---\r\nlicense: MIT\r\nname: review\r\ndescription: >\r\n  Folded\r\n  text.\r\nallowed-tools: Read\r\n---\r\nBody\r\n",
			want: Meta{Name: "review", Description: "Folded text.\n", NameLine: 3, DescriptionLine: 4}},
		{name: "limit description", data: "---\nname: a\ndescription: " + long + "\n---\n",
			want: Meta{Name: "a", Description: long, NameLine: 2, DescriptionLine: 3}},
		{name: "no front matter", data: "# Review\n", wantErrs: []string{"1: no front matter"}},
		{name: "empty file", data: "", wantErrs: []string{"1: no front matter"}},
		{name: "not closed", data: "---\nname: a\ndescription: b\n", wantErrs: []string{"1: the front matter is not closed"}},
		{name: "empty", data: "---\n---\n", wantErrs: []string{"1: the front matter is empty"}},
		{name: "not a mapping", data: "---\n- a\n---\n", wantErrs: []string{"2: the front matter is not a mapping"}},
		{name: "bad YAML", data: "---\nname: a\ndescription: b: c\n---\n", wantErrs: []string{"3: invalid YAML"}},
		{name: "duplicate key", data: "---\nname: a\nname: b\ndescription: c\n---\n", wantErrs: []string{"invalid YAML"}},
		{name: "no name", data: "---\ndescription: b\n---\n", wantErrs: []string{"1: the front matter has no name"}},
		{name: "bad name", data: "---\ndescription: b\nname: Review_It\n---\n", wantErrs: []string{`3: name "Review_It" holds 'R'`}},
		{name: "name not a string", data: "---\nname: [a]\ndescription: b\n---\n", wantErrs: []string{"2: name is not a string"}},
		{name: "numeric name", data: "---\nname: 42\ndescription: b\n---\n", wantErrs: []string{"2: name is not a string"}},
		{name: "long name", data: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", wantErrs: []string{"2: name", "the limit is 64"}},
		{name: "no description", data: "---\nname: a\n---\n", wantErrs: []string{"1: the front matter has no description"}},
		{name: "empty description", data: "---\nname: a\ndescription: \"  \"\n---\n", wantErrs: []string{"3: description is empty"}},
		{name: "null description", data: "---\nname: a\ndescription:\n---\n", wantErrs: []string{"3: description is empty"}},
		{name: "long description", data: "---\nname: a\ndescription: " + long + "é\n---\n", wantErrs: []string{"3: description is 1025 characters long"}},
		{name: "both wrong", data: "---\nname: A\ndescription: ''\n---\n", wantErrs: []string{"2: name", "3: description is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, err := Parse("x/SKILL.md", []byte(tt.data))
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Parse() = %v", err)
				}
				if *meta != tt.want {
					t.Errorf("Parse() = %+v, want %+v", *meta, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse() = %+v, want errors %q", meta, tt.wantErrs)
			}
			for _, w := range tt.wantErrs {
				if !strings.Contains(err.Error(), "x/SKILL.md:"+w) && !strings.Contains(err.Error(), w) {
					t.Errorf("Parse() = %v, want an error containing %q", err, "x/SKILL.md:"+w)
				}
				if !strings.HasPrefix(err.Error(), "x/SKILL.md:") {
					t.Errorf("Parse() = %v, which does not name the file", err)
				}
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("Parse() = %T, want a *FileError", err)
			}
		})
	}
}

// FuzzParse checks that an accepted SKILL.md has a valid name and
// description, that each error names the file, and that rendering the
// accepted front matter again parses to the same name and description.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\ndescription: b\n---\n", "---\nname: a\ndescription: |\n  x\n---\n", "---\n---\n",
		"---\nname: [\n---\n", "---\r\nname: a-b\r\ndescription: c\r\n---", "x", "---\nname: a\ndescription: b\n...\n", "---\n\tname: a\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		meta, err := Parse("f/SKILL.md", data)
		if err != nil {
			for _, e := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(e, "f/SKILL.md:") {
					t.Fatalf("error %q does not name the file", e)
				}
			}
			return
		}
		if ValidateName(meta.Name) != nil || strings.TrimSpace(meta.Description) == "" || len([]rune(meta.Description)) > MaxDescription {
			t.Fatalf("accepted an invalid front matter: %+v", meta)
		}
		front, err := yaml.Marshal(map[string]string{"name": meta.Name, "description": meta.Description})
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("f/SKILL.md", append(append([]byte("---\n"), front...), "---\nbody\n"...))
		if err != nil || again.Name != meta.Name || again.Description != meta.Description {
			t.Fatalf("round trip of %+v = %+v, %v", meta, again, err)
		}
	})
}

func TestReadDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "review")
	write(t, filepath.Join(dir, "SKILL.md"), "---\nname: review\ndescription: d\n---\n")
	write(t, filepath.Join(dir, "scripts/check.sh"), "#!/bin/sh\n")
	must(t, os.Chmod(filepath.Join(dir, "scripts/check.sh"), 0o755))
	write(t, filepath.Join(dir, ".git/HEAD"), "x")
	// Names a file system takes for .git are left out as .git is: a
	// skill installed into a sandbox on a case-insensitive tree must not
	// bring hooks.
	write(t, filepath.Join(dir, ".GIT/hooks/pre-commit"), "x")
	write(t, filepath.Join(dir, "GIT~1/config"), "x")
	c, err := ReadDir(dir, root, "review")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range c.Files {
		got = append(got, f.Path+map[bool]string{true: "*", false: ""}[f.Exec])
	}
	if strings.Join(got, " ") != "SKILL.md scripts/check.sh*" {
		t.Errorf("files = %q, want SKILL.md scripts/check.sh* (.git, .GIT and GIT~1 left out, the executable bit kept)", got)
	}
	if _, err := ReadDir(dir, root, "other"); err == nil || !strings.Contains(err.Error(), `differs from the skill's directory name "other"`) {
		t.Errorf("ReadDir with another name = %v", err)
	}
	old := MaxFiles
	MaxFiles = 1
	defer func() { MaxFiles = old }()
	if _, err := ReadDir(dir, root, "review"); err == nil || !strings.Contains(err.Error(), "more than 1 files") {
		t.Errorf("ReadDir over the file limit = %v", err)
	}
}
