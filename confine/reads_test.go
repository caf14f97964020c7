package confine

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fakeTree is the file system the tests of ReadRules walk: a home with
// secrets, a symlink to them, a workforce home with two sessions, a
// project with its git objects.
var fakeTree = fstest.MapFS{
	"etc/hostname":                           {Data: []byte("h")},
	"usr/bin/node":                           {Data: []byte("elf")},
	"home/u/.bashrc":                         {Data: []byte("x")},
	"home/u/.ssh/id_ed25519":                 {Data: []byte("key")},
	"home/u/.config/gh/hosts.yml":            {Data: []byte("token")},
	"home/u/.config/git/config":              {Data: []byte("[user]")},
	"home/u/keys":                            {Data: []byte(".ssh"), Mode: fs.ModeSymlink},
	"home/u/src/p/main.go":                   {Data: []byte("package main")},
	"home/u/src/p/.git/objects/ab/cd":        {Data: []byte("obj")},
	"home/u/.wf/sessions/me/tree/a.go":       {Data: []byte("a")},
	"home/u/.wf/sessions/other/tree/b.go":    {Data: []byte("b")},
	"home/u/.wf/results/r1/result.json":      {Data: []byte("{}")},
	"home/u/.local/share/opencode/auth.json": {Data: []byte("{}")},
	"tmp/x":                                  {Data: []byte("x")},
}

// fakeList lists fakeTree for ReadRules.
func fakeList(dir string) ([]fs.DirEntry, error) {
	name := strings.TrimPrefix(dir, "/")
	if name == "" {
		name = "."
	}
	return fs.ReadDir(fakeTree, name)
}

func rulesText(rules []ReadRule) []string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		if r.Dir {
			out = append(out, r.Path+"/")
		} else {
			out = append(out, r.Path)
		}
	}
	slices.Sort(out)
	return out
}

func TestReadRules(t *testing.T) {
	homeSiblings := []string{"/etc/", "/tmp/", "/usr/", "/home/u/.bashrc", "/home/u/.config/", "/home/u/.local/", "/home/u/.wf/", "/home/u/src/"}
	without := func(list []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
	}
	with := func(list []string, add ...string) []string {
		out := append(slices.Clone(list), add...)
		slices.Sort(out)
		return out
	}
	for _, tt := range []struct {
		name        string
		deny, allow []string
		want        []string
		err         string
	}{
		{name: "nothing denied", want: []string{"//"}},
		{name: "one directory", deny: []string{"/home/u/.ssh"}, want: homeSiblings},
		{name: "trailing slash and dots", deny: []string{"/home/u/src/../.ssh/"}, want: homeSiblings},
		{name: "a denied path that does not exist", deny: []string{"/home/u/.aws"}, want: with(homeSiblings, "/home/u/.ssh/")},
		{name: "a denied path below a missing directory", deny: []string{"/home/u/.nope/x/y"}, want: with(homeSiblings, "/home/u/.ssh/")},
		{name: "a file", deny: []string{"/home/u/.bashrc"}, want: with(without(homeSiblings, "/home/u/.bashrc"), "/home/u/.ssh/")},
		{name: "nested", deny: []string{"/home/u/.config/gh"},
			want: with(without(homeSiblings, "/home/u/.config/"), "/home/u/.ssh/", "/home/u/.config/git/")},
		{name: "denied with an allowed entry below",
			deny: []string{"/home/u/.wf", "/home/u/src/p"}, allow: []string{"/home/u/.wf/sessions/me", "/home/u/src/p/.git/objects"},
			want: with(without(homeSiblings, "/home/u/.wf/", "/home/u/src/"), "/home/u/.ssh/", "/home/u/.wf/sessions/me/", "/home/u/src/p/.git/objects/")},
		{name: "a deny equal to an allow is denied", deny: []string{"/home/u/.ssh"}, allow: []string{"/home/u/.ssh"}, want: homeSiblings},
		{name: "an allow no deny covers changes nothing", allow: []string{"/home/u/src"}, want: []string{"//"}},
		{name: "a deny below a deny changes nothing", deny: []string{"/home/u", "/home/u/.ssh"}, want: []string{"/etc/", "/tmp/", "/usr/"}},
		{name: "an allow below an allow changes nothing", deny: []string{"/"}, allow: []string{"/usr", "/usr/bin"}, want: []string{"/usr/"}},
		{name: "an allow below a denied file", deny: []string{"/etc/hostname"}, allow: []string{"/etc/hostname/x"}, want: []string{"/home/", "/tmp/", "/usr/"}},
		{name: "root denied", deny: []string{"/"}, want: []string{}},
		{name: "root denied, roots allowed, a deny below a root",
			deny: []string{"/", "/home/u/.ssh"}, allow: []string{"/usr", "/etc/hostname", "/home/u", "/home/u/.ssh/id_ed25519"},
			want: []string{"/etc/hostname", "/home/u/.bashrc", "/home/u/.config/", "/home/u/.local/", "/home/u/.ssh/id_ed25519", "/home/u/.wf/", "/home/u/src/", "/usr/"}},
		{name: "an allowed symlink gets no rule", deny: []string{"/"}, allow: []string{"/home/u/keys"}, want: []string{}},
		{name: "a denied path under a symlink grants nothing there", deny: []string{"/home/u/keys/id_ed25519"},
			want: with(without(homeSiblings), "/home/u/.ssh/")},
		{name: "relative", deny: []string{"home/u/.ssh"}, err: `read path "home/u/.ssh": not an absolute path`},
		{name: "empty", allow: []string{""}, err: `read path "": not an absolute path`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := ReadRules(tt.deny, tt.allow, fakeList)
			if errText(err) != tt.err {
				t.Fatalf("ReadRules(%q, %q) error = %v, want %q", tt.deny, tt.allow, err, tt.err)
			}
			if tt.err != "" {
				return
			}
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if got := rulesText(rules); !slices.Equal(got, want) {
				t.Errorf("ReadRules(%q, %q) =\n%q\nwant\n%q", tt.deny, tt.allow, got, want)
			}
		})
	}
}

// readable reports whether the rules grant p.
func readable(rules []ReadRule, p string) bool {
	for _, r := range rules {
		if p == r.Path || r.Dir && within(p, r.Path) {
			return true
		}
	}
	return false
}

// FuzzReadRules: whatever the deny and allow lists, ReadRules grants a
// path of the fake tree exactly when the nearest list entry at or above
// it is an allow (or there is none), but for the directories on the way
// to an entry, which are never granted; it never grants a symlink.
func FuzzReadRules(f *testing.F) {
	for _, s := range []string{
		"-/home/u/.ssh", "-/home/u/../u/.ssh/\n+/home/u/.ssh/id_ed25519", "-/\n+/usr\n+/home/u/.config/git",
		"-/home/u/.wf\n+/home/u/.wf/sessions/me\n-/home/u/.wf/sessions/me/tree", "-/home/u/keys", "+/home/u/keys\n-/",
		"-/home/u/.ssh\n+/home/u/.ssh", "-/nope/x", "-rel", "+", "-/etc/hostname/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var deny, allow []string
		bad := false
		for _, line := range strings.Split(s, "\n") {
			if line == "" {
				continue
			}
			p := line[1:]
			if p == "" || strings.ContainsRune(p, 0) || !filepath.IsAbs(p) {
				bad = true
			}
			if line[0] == '-' {
				deny = append(deny, p)
			} else {
				allow = append(allow, p)
			}
		}
		rules, err := ReadRules(deny, allow, fakeList)
		if bad != (err != nil) {
			t.Fatalf("ReadRules(%q, %q) error = %v, want one: %v", deny, allow, err, bad)
		}
		if err != nil {
			return
		}
		entries := map[string]bool{}
		for _, p := range allow {
			entries[filepath.Clean(p)] = false
		}
		for _, p := range deny {
			entries[filepath.Clean(p)] = true
		}
		// An entry that says what the one above it says changes
		// nothing, and takes no listing.
		all := entries
		entries = essential(entries)
		onTheWay := func(p string) bool {
			for e := range entries {
				if e != p && within(e, p) {
					return true
				}
			}
			return false
		}
		denied := func(p string) bool {
			for q := p; ; q = filepath.Dir(q) {
				if d, ok := all[q]; ok {
					return d
				}
				if q == "/" {
					return false
				}
			}
		}
		var symlinks []string
		err = fs.WalkDir(fakeTree, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			p := "/" + name
			if name == "." {
				p = "/"
			}
			if d.Type()&fs.ModeSymlink != 0 {
				symlinks = append(symlinks, p)
				return nil
			}
			// A file has nothing below it: an entry "below" it
			// does not take it.
			want := !denied(p) && !(d.IsDir() && onTheWay(p))
			if got := readable(rules, p); got != want {
				t.Errorf("ReadRules(%q, %q): %s readable %v, want %v (rules %q)", deny, allow, p, got, want, rulesText(rules))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rules {
			for _, l := range symlinks {
				if r.Path == l || within(r.Path, l) {
					t.Errorf("ReadRules(%q, %q) grants %s, at or below the symlink %s", deny, allow, r.Path, l)
				}
			}
			if path.Clean(r.Path) != r.Path {
				t.Errorf("ReadRules(%q, %q): rule %q not clean", deny, allow, r.Path)
			}
		}
	})
}
