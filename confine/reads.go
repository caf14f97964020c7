package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// Reads. Landlock has no deny rule: once a right is handled, it is
// allowed only beneath the paths a rule names. A ReadPolicy handles the
// read rights (reading files, listing directories, and executing files:
// a denied path is not executed either, so a program in a denied
// directory cannot be run to read itself) and grants them on everything
// but the denied paths, by walking from "/" toward each denied path and
// granting each sibling met on the way (ReadRules): a directory holding no
// denied path below it is granted whole, a denied directory grants only
// the Allow entries below it, and a directory on the way to a denied
// path gets no rule of its own.
//
// Consequences, all measured by the tests:
//
//   - A directory on the way to a denied path cannot be listed: with
//     ~/.ssh denied, `ls ~` fails (EACCES), while ~/.bashrc and ~/src/x
//     stay readable.
//   - What appears in such a directory after the launch is unreadable: a
//     rule names the inodes the walk found, so a file created in $HOME
//     during the run, or one replaced there by a rename (an editor's save
//     of ~/.gitconfig), cannot be read by the harness until the next run.
//   - The home directory must never be writable: a writable directory
//     gets the read rights beneath it too (a harness reads what it
//     writes), so a writable $HOME would make ~/.ssh readable again.
//     Policy.Check refuses it; any writable path at or above a denied one
//     makes it readable, and the caller must not allow one.
//   - Symlinks: Landlock decides by the file reached, not the name used.
//     A denied path reached through a symlink (~/keys -> ~/.ssh) is the
//     same inode and stays denied; a sibling that is a symlink gets no
//     rule (a rule would grant what it leads to, perhaps a denied path):
//     its target is granted or denied where it is. The caller resolves a
//     denied path that is itself a symlink or under one (ResolvePath):
//     the denial must name the real directory, or the walk would grant
//     it by its real path.
//   - A hard link elsewhere to a denied file, or a bind mount of a denied
//     directory, is readable by that other path: Landlock checks the
//     path a file is opened by.
//
// Cost: the rules are one per sibling on the way, plus the Allow
// entries; the walk lists only the directories on the way. Measured on
// the development machine (TestReadRulesHome logs it: root's home, 15
// entries, with the deny list and the workforce home): 32 rules,
// 0.3 to 1.4 ms to resolve and list; the issue measured 43 rules for
// /root, about 100 for a typical home, 0.5 to 3 ms. The launcher then
// opens each path once (O_PATH).

// ReadPolicy restricts what a confined harness may read. Nil in Policy
// leaves reads unrestricted.
type ReadPolicy struct {
	// Deny are paths unreadable, with everything below them. "/" denies
	// everything but the Allow entries and the writable set.
	Deny []string `json:"deny,omitempty"`
	// Allow are paths readable again below a denied one (an Allow entry
	// that no denied path covers changes nothing). A path both denied
	// and allowed is denied.
	Allow []string `json:"allow,omitempty"`
	// Strict makes only the read roots (StrictRoots that exist, and
	// Roots), the Allow entries and the writable set readable: as if
	// "/" were denied and the roots allowed; Deny still applies below
	// them.
	Strict bool `json:"strict,omitempty"`
	// Roots are paths readable in strict mode besides StrictRoots.
	Roots []string `json:"roots,omitempty"`
}

// StrictRoots are the system directories a strict read policy keeps
// readable, where they exist ("/lib*" stands for every /lib directory:
// /lib, /lib64, /libx32 ...).
var StrictRoots = []string{"/usr", "/etc", "/lib*", "/bin", "/sbin", "/opt", "/nix", "/proc", "/sys", "/dev"}

// check returns an error naming the first path of r that is empty,
// relative or not clean.
func (r *ReadPolicy) check() error {
	for _, set := range []struct {
		what  string
		paths []string
	}{{"denied read path", r.Deny}, {"allowed read path", r.Allow}, {"read root", r.Roots}} {
		for _, path := range set.paths {
			if err := checkPath(path); err != nil {
				return fmt.Errorf("sandbox %s %q: %w", set.what, path, err)
			}
		}
	}
	return nil
}

// ReadRule is a path to grant the read rights on, with everything below
// it when it is a directory.
type ReadRule struct {
	Path string
	Dir  bool
}

// Lister lists a directory's entries, as os.ReadDir does.
type Lister func(dir string) ([]fs.DirEntry, error)

// ReadRules returns the paths to grant the read rights on so that
// everything is readable but the paths deny names and what lies below
// them, and the paths allow names below a denied one readable again. The
// nearest entry above a path decides (a path is at or below itself); a
// path both denied and allowed is denied. Paths are taken as they are
// written, cleaned: "a/.." is ".", a trailing slash is dropped; relative
// or empty ones are an error. list lists the directories on the way; one
// missing or not a directory (ENOENT, ENOTDIR) lists as empty, another
// error is returned. Symlinks met on the way get no rule, and are not
// followed.
func ReadRules(deny, allow []string, list Lister) ([]ReadRule, error) {
	entries := map[string]bool{} // path: true when denied
	for _, set := range []struct {
		paths  []string
		denied bool
	}{{allow, false}, {deny, true}} {
		for _, p := range set.paths {
			if p == "" || strings.ContainsRune(p, 0) || !filepath.IsAbs(p) {
				return nil, fmt.Errorf("read path %q: not an absolute path", p)
			}
			entries[filepath.Clean(p)] = set.denied
		}
	}
	// An entry that says what the nearest one above it says (an allow
	// no deny covers, /usr/lib allowed below /usr) changes nothing:
	// dropped, or the walk would take the listing of the directories
	// above it.
	entries = essential(entries)
	// Above: whether a path has entries strictly below it.
	above := map[string]bool{}
	for p := range entries {
		for d := p; d != "/"; {
			d = filepath.Dir(d)
			if above[d] {
				break
			}
			above[d] = true
		}
	}
	var rules []ReadRule
	var walk func(dir string, denied bool) error
	walk = func(dir string, denied bool) error {
		if d, ok := entries[dir]; ok {
			denied = d
		}
		if !above[dir] {
			if !denied {
				rules = append(rules, ReadRule{Path: dir, Dir: true})
			}
			return nil
		}
		ents, err := list(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			ents, err = nil, nil
		}
		if err != nil {
			return fmt.Errorf("cannot list %s: %w", dir, err)
		}
		for _, e := range ents {
			child := filepath.Join(dir, e.Name())
			if e.Name() == "" || e.Name() == "." || e.Name() == ".." || strings.ContainsRune(e.Name(), '/') {
				continue
			}
			typ := e.Type()
			if typ&fs.ModeSymlink != 0 {
				continue
			}
			_, entry := entries[child]
			if entry || above[child] {
				if typ.IsDir() {
					if err := walk(child, denied); err != nil {
						return err
					}
					continue
				}
				if entry {
					denied := entries[child]
					if !denied {
						rules = append(rules, ReadRule{Path: child})
					}
					continue
				}
				// Entries below a file: none can exist.
			}
			if !denied {
				rules = append(rules, ReadRule{Path: child, Dir: typ.IsDir()})
			}
		}
		return nil
	}
	if err := walk("/", false); err != nil {
		return nil, err
	}
	return rules, nil
}

// essential returns the entries (path: denied) that change what the
// nearest entry above them says; above every path, nothing is denied.
func essential(entries map[string]bool) map[string]bool {
	out := map[string]bool{}
	for p, denied := range entries {
		above := false
		for q := p; q != "/"; {
			q = filepath.Dir(q)
			if d, ok := entries[q]; ok {
				above = d
				break
			}
		}
		if denied != above {
			out[p] = denied
		}
	}
	return out
}

// ResolvePath returns path with its symlinks resolved, as far as it
// exists: the part that does not exist is appended as written. A path
// that cannot be resolved comes back clean as it was.
func ResolvePath(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for p := path; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == "/" || p == "." {
			return path
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
