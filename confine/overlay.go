package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Overlay is the project shown to the harness through an overlay
// (Namespaces.Overlay): the real project as the read-only lower layer,
// the session's upper layer taking every write, merged at Target in the
// harness's mount namespace. Nothing is copied: the mount takes the same
// few milliseconds whatever the size of the tree.
//
// The launcher mounts the overlay (option userxattr: no privilege
// outside the namespace) with its layers named by its own descriptors on
// them (/proc/self/fd/N), which is all the overlay's options show:
// /proc/self/mountinfo inside names no real path of the project nor of
// the session. The harness
// sees the merged tree at Target only; it cannot unmount it (it has no
// capability), and it cannot write Lower, Upper or Work by their own
// paths (Policy.Check refuses a writable directory at or above one of
// them, and Landlock allows writes beneath Target only). The overlay
// itself writes Upper and reads Lower with the launcher's credentials
// from before Landlock, so reads of the real project may be denied
// (ReadPolicy.Deny names Lower) and the merged tree stays readable.
type Overlay struct {
	// Lower is the real project directory, the lower layer: read, never
	// written. It is live, not a snapshot: the harness sees the user's
	// edits to the files it has not written.
	Lower string `json:"lower"`
	// Upper is the upper layer: every write, whiteouts for deletions
	// (character devices 0:0) and opaque directories for replaced ones.
	// Work is overlayfs's work directory. Both must be directories on
	// the same mount, of a file system that keeps user extended
	// attributes.
	Upper string `json:"upper"`
	Work  string `json:"work"`
	// Target is where the merged tree appears: an existing (empty)
	// directory, the harness's working directory, which must be among
	// the policy's writable directories.
	Target string `json:"target"`
	// Whiteouts are paths relative to Lower, with slashes, hidden in the
	// merged tree (the ignored files): the launcher makes a whiteout in
	// Upper for each that exists in Lower, before the mount. They are not
	// deletions of the agent's: the caller leaves them out of sync-back.
	Whiteouts []string `json:"whiteouts,omitempty"`
}

// check refuses a path that is not absolute and clean, layers that
// overlap, and a whiteout that is not a clean relative path inside the
// tree.
func (o *Overlay) check() error {
	paths := []struct{ what, path string }{{"lower", o.Lower}, {"upper", o.Upper}, {"work", o.Work}, {"target", o.Target}}
	for i, p := range paths {
		if err := checkPath(p.path); err != nil {
			return fmt.Errorf("sandbox overlay %s %q: %w", p.what, p.path, err)
		}
		if p.path == "/" {
			return fmt.Errorf("sandbox overlay %s %q: the root directory", p.what, p.path)
		}
		for _, q := range paths[:i] {
			if within(p.path, q.path) || within(q.path, p.path) {
				return fmt.Errorf("sandbox overlay: the %s %q and the %s %q overlap", q.what, q.path, p.what, p.path)
			}
		}
	}
	for _, w := range o.Whiteouts {
		if w == "" || w == "." || filepath.IsAbs(w) || filepath.Clean(w) != w || w == ".." || strings.HasPrefix(w, "../") ||
			strings.ContainsRune(w, 0) {
			return fmt.Errorf("sandbox overlay whiteout %q: want a clean path inside the tree", w)
		}
	}
	return nil
}

// checkPolicy refuses a policy whose writable set does not name Target,
// or reaches Lower, Upper or Work by their own paths (a writable
// directory at, below or above one of them, a writable file below one).
func (o *Overlay) checkPolicy(p Policy) error {
	hasTarget := false
	for _, d := range p.Dirs {
		hasTarget = hasTarget || d == o.Target
	}
	if !hasTarget {
		return fmt.Errorf("sandbox overlay target %q: not among the writable directories", o.Target)
	}
	for _, layer := range []string{o.Lower, o.Upper, o.Work} {
		for _, d := range p.Dirs {
			if within(layer, d) || within(d, layer) {
				return fmt.Errorf("sandbox writable directory %q: the overlay's layer %q would be writable by its own path", d, layer)
			}
		}
		for _, f := range p.Files {
			if within(f, layer) {
				return fmt.Errorf("sandbox writable file %q: in the overlay's layer %q", f, layer)
			}
		}
	}
	return nil
}

// OverlayEnv is the environment variable that, set to "off", makes
// OverlayAvailable report that this system cannot show the harness the
// project through an overlay: a hook for tests, as UsernsEnv is.
const OverlayEnv = "WORKFORCE_OVERLAY"

// overlayCache is the file under the cache directory that keeps
// OverlayAvailable's answer for the boot it names.
const overlayCache = "overlay"

// OverlayAvailable reports whether this system can start a harness in
// its namespaces with an Overlay, and why not. Only trying tells (user
// namespaces allowed and overlayfs built in, an LSM may still deny the
// mount; the file system may keep no user extended attributes): a
// launcher started in the namespaces mounts a throwaway overlay, with a
// whiteout, in a directory made under cacheDir (or the system's
// temporary directory when cacheDir is empty), and writes through it.
// Pass a cacheDir on the file system of the sessions' upper layers. The
// answer is kept in the file "overlay" under cacheDir for the boot
// (/proc/sys/kernel/random/boot_id); an empty cacheDir keeps nothing.
// OverlayEnv set to "off" makes it report unavailable without trying.
func OverlayAvailable(cacheDir string) (bool, string) {
	if os.Getenv(OverlayEnv) == "off" {
		return false, OverlayEnv + "=off"
	}
	if err := NamespacesAvailable(cacheDir); err != nil {
		return false, err.Error()
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	bootID := strings.TrimSpace(string(boot))
	cache := ""
	if cacheDir != "" && bootID != "" {
		cache = filepath.Join(cacheDir, overlayCache)
		if id, reason, ok := readNamespacesCache(cache); ok && id == bootID {
			return reason == "", reason
		}
	}
	reason := ""
	if err := probeOverlay(cacheDir); err != nil {
		reason = strings.ReplaceAll(err.Error(), "\n", " ")
	}
	if cache != "" && os.MkdirAll(cacheDir, 0o700) == nil {
		tmp := cache + fmt.Sprintf(".%d", os.Getpid())
		if os.WriteFile(tmp, []byte(bootID+"\n"+reason+"\n"), 0o600) == nil {
			_ = os.Rename(tmp, cache)
		}
	}
	return reason == "", reason
}

// RemoveOverlayDirs removes the upper and work directories of an
// overlay once its namespace is gone: overlayfs leaves a directory of
// mode 000 in the work directory, and the agent may have left
// directories it cannot list in the upper one, so each directory is
// made the owner's to list and write before its entries are removed.
// Symbolic links are removed, never followed. A path that does not exist
// is no error.
func RemoveOverlayDirs(upper, work string) error {
	var errs []error
	for _, dir := range []string{upper, work} {
		if dir == "" {
			continue
		}
		if err := removeWritable(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
