package persona

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// ValidatePath checks a sidecar path as written in a persona file: it must
// be a non-empty relative POSIX path with no ".." segment, no leading "/" or
// "\", no drive letter, no backslash and no NUL, naming a ".md" file. It does
// not touch the file system; Anchor checks where the path leads.
func ValidatePath(p string) error {
	if err := validateRel("sidecar path", p); err != nil {
		return err
	}
	base := p[strings.LastIndexByte(p, '/')+1:]
	if len(base) <= len(".md") || !strings.EqualFold(base[len(base)-3:], ".md") {
		return fmt.Errorf("sidecar path %q does not name a .md file", p)
	}
	return nil
}

// validateRel checks that p, a path of the kind what names ("sidecar
// path", "skill path"), is a non-empty relative POSIX path with no ".."
// segment, no leading "/" or "\", no drive letter, no backslash and no
// NUL: joined to a directory, it stays inside it.
func validateRel(what, p string) error {
	switch {
	case p == "":
		if what == "sidecar path" {
			return errors.New("sidecar path is empty; want a relative path to a .md file such as \"persona.md\"")
		}
		return fmt.Errorf("%s is empty", what)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("%s %q contains a NUL byte", what, p)
	case p[0] == '/' || p[0] == '\\':
		return fmt.Errorf("%s %q is absolute; want a path relative to the persona file", what, p)
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		return fmt.Errorf("%s %q names a drive; want a path relative to the persona file", what, p)
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("%s %q contains a backslash; use / to separate directories", what, p)
	}
	for rest := p; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == ".." {
			return fmt.Errorf("%s %q leaves the persona's directory with \"..\"; keep it beside or below the persona file", what, p)
		}
	}
	return nil
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// ErrMissingSidecar is wrapped by the warnings Anchor returns for sidecar
// files that do not exist.
var ErrMissingSidecar = errors.New("sidecar file not found")

// Anchor resolves every sidecar path of spec, which was read from file, to
// an absolute path in the directory of file, and checks it there: after
// symlinks are resolved it must stay inside that directory and name a
// regular file. A sidecar that does not exist is not an error: its field is
// cleared (with the mode of the same scope when no content remains) and a
// warning wrapping ErrMissingSidecar is returned.
func Anchor(spec *Spec, file string) (warnings []*diag.Diagnostic, err error) {
	return anchorFile(spec, file, false)
}

// AnchorStrict is Anchor for a persona that is packed or installed, which
// must carry every file it names: a sidecar that does not exist is an
// error (its message starts with ErrMissingSidecar's), not a warning and a
// cleared field.
func AnchorStrict(spec *Spec, file string) error {
	_, err := anchorFile(spec, file, true)
	return err
}

func anchorFile(spec *Spec, file string, strict bool) (warnings []*diag.Diagnostic, err error) {
	refs := spec.SidecarRefs()
	if len(refs) == 0 {
		return nil, nil
	}
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, &diag.Diagnostic{File: file, Message: fmt.Sprintf("cannot resolve the persona directory: %v", err)}
	}
	return anchorIn(spec, refs, file, &layerDir{dir: dir, realDir: realDir, strict: strict})
}

// anchorIn is Anchor with the declaring directory, absolute, and its
// symlink-free form already known, as they are for a whole layer, and its
// listing when the layer's is.
func anchorIn(spec *Spec, refs []SidecarRef, file string, ld *layerDir) (warnings []*diag.Diagnostic, err error) {
	dir, realDir := ld.dir, ld.realDir
	var errs diag.Errors
	for _, ref := range refs {
		if err := ValidatePath(ref.Path); err != nil {
			errs = append(errs, &diag.Diagnostic{File: file, Field: ref.Field(), Message: err.Error()})
			continue
		}
		abs := filepath.Join(dir, filepath.FromSlash(ref.Path))
		real, mode, err := realPath(abs, ld)
		if errors.Is(err, fs.ErrNotExist) && ld.strict {
			errs = append(errs, &diag.Diagnostic{File: file, Field: ref.Field(),
				Message: fmt.Sprintf("%v: %s; a persona that is packed or installed must carry every file it names", ErrMissingSidecar, abs)})
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			warnings = append(warnings, &diag.Diagnostic{File: file, Field: ref.Field(),
				Message: fmt.Sprintf("%v: %s; the field is ignored", ErrMissingSidecar, abs)})
			clearRef(spec, ref)
			continue
		}
		if err != nil {
			errs = append(errs, &diag.Diagnostic{File: file, Field: ref.Field(), Message: fmt.Sprintf("cannot resolve sidecar %s: %v", abs, err)})
			continue
		}
		if real != "" && !pathutil.Within(realDir, real) {
			errs = append(errs, &diag.Diagnostic{File: file, Field: ref.Field(),
				Message: fmt.Sprintf("sidecar %q resolves through a symlink to %s, outside the persona directory %s", ref.Path, real, realDir)})
			continue
		}
		if !mode.IsRegular() {
			errs = append(errs, &diag.Diagnostic{File: file, Field: ref.Field(), Message: fmt.Sprintf("sidecar %s is not a regular file", abs)})
			continue
		}
		spec.SetSidecarPath(ref, abs)
	}
	if len(errs) > 0 {
		return warnings, errs
	}
	return warnings, nil
}

// realPath resolves the symlinks of abs, a path below dir, and returns the
// type of the file it leads to. The common case, a plain file directly in
// dir, costs one Lstat instead of one per path element, and nothing at all
// when the directory's listing is known; it returns "" for the real path,
// which is realDir's entry of the same name, inside realDir by
// construction.
func realPath(abs string, ld *layerDir) (string, fs.FileMode, error) {
	if filepath.Dir(abs) == ld.dir {
		base := filepath.Base(abs)
		var mode fs.FileMode
		if ld.listed {
			m, ok := ld.lookup(base)
			if !ok {
				return "", 0, &fs.PathError{Op: "lstat", Path: abs, Err: fs.ErrNotExist}
			}
			mode = m
		} else {
			fi, err := os.Lstat(abs)
			if err != nil {
				return "", 0, err
			}
			mode = fi.Mode()
		}
		if mode&fs.ModeSymlink == 0 {
			return "", mode, nil
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", 0, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", 0, err
	}
	return real, fi.Mode(), nil
}

// clearRef removes a missing sidecar from spec as if it had not been
// written, together with the mode of the same scope.
func clearRef(spec *Spec, ref SidecarRef) {
	sc := &spec.Sidecars
	if ref.Tier != "" {
		sc = &spec.Tiers[ref.Tier].Sidecars
	}
	p, m, _ := sc.Fields(ref.Channel)
	*p, *m = "", ""
}
