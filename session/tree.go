package session

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/mount"
)

// The tree (issue 44). A run's sandbox shows the project to the harness
// in one of two ways:
//
//   - copy: the project copied into <session>/tree (package mount), the
//     sandbox every run had before;
//   - overlay: nothing copied; the launcher mounts an overlay in the
//     harness's mount namespace, the real project as its read-only
//     lower layer and the session's upper layer taking every write, at
//     <session>/tree (confine.Overlay). It needs the harness confined in
//     namespaces (Linux) and a kernel that lets an unprivileged user
//     mount it (confine.OverlayAvailable, tried once per boot).
//
// auto, the default, takes the overlay where it is available and the
// tree holds more than AutoThreshold files, the copy otherwise; it
// decides without walking the tree (treeLarger).
//
// Where the overlay cannot be had, the run takes the copy with a warning
// naming why (a note for auto, which asked for nothing), under sandbox
// mode strict too: strict asks for the confinement, which the copy gives
// as well.

// TreeEnv is the environment variable that sets the tree of runs that do
// not ask for one (--tree, a persona's mount.tree), above "tree" in
// config.json: copy, overlay or auto.
const TreeEnv = "WORKFORCE_TREE"

// TreeMode is how the sandbox shows the project to the harness.
type TreeMode string

// The tree modes.
const (
	TreeCopy    TreeMode = "copy"
	TreeOverlay TreeMode = "overlay"
	TreeAuto    TreeMode = "auto"
)

// AutoThreshold is the number of files above which auto takes the
// overlay: below it the copy costs less than about 50 ms on a disk, and
// keeps every promise of a run.
const AutoThreshold = 5000

// ParseTree parses a tree mode: copy, overlay or auto.
func ParseTree(s string) (TreeMode, error) {
	switch m := TreeMode(s); m {
	case TreeCopy, TreeOverlay, TreeAuto:
		return m, nil
	}
	return "", fmt.Errorf("tree %q: want copy, overlay or auto", s)
}

// TreeChoice is the tree a run asks for, with where the choice came from
// (PlanOptions.Tree is the flag's, Sandbox.Tree the environment's or the
// configuration's).
type TreeChoice struct {
	Mode   TreeMode
	Origin string
}

// treeFromEnv returns the tree $WORKFORCE_TREE names, else config.json's
// "tree" of cfgTree, else none.
func treeFromEnv(cfgTree string, getenv func(string) string) (TreeChoice, error) {
	if env := getenv(TreeEnv); env != "" {
		m, err := ParseTree(env)
		if err != nil {
			return TreeChoice{}, fmt.Errorf("$%s: %w", TreeEnv, err)
		}
		return TreeChoice{Mode: m, Origin: "$" + TreeEnv}, nil
	}
	if cfgTree != "" {
		return TreeChoice{Mode: TreeMode(cfgTree), Origin: `"tree" in config.json`}, nil
	}
	return TreeChoice{}, nil
}

// treeAsked is the tree the run of o asks for: --tree, else the
// persona's mount.tree, else the environment's or the configuration's
// (Sandbox.Tree), else auto.
func treeAsked(o PlanOptions) TreeChoice {
	if o.Tree.Mode != "" {
		return o.Tree
	}
	if m := o.Resolved.Mount.Tree; m != "" {
		return TreeChoice{Mode: TreeMode(m), Origin: "the persona's mount.tree"}
	}
	if o.Sandbox.Tree.Mode != "" {
		return o.Sandbox.Tree
	}
	return TreeChoice{Mode: TreeAuto, Origin: defaultTreeOrigin}
}

// defaultTreeOrigin is the origin of the tree a run takes when nothing
// asks for one: auto. Its fallback to the copy is said nowhere (the
// plan's tree says copy): the run asked for nothing, and a system
// without the overlay (not Linux, no namespaces) would otherwise hear
// of it on every run of a large project.
const defaultTreeOrigin = "the default"

// planTree decides the tree of the planned run p (Plan.Tree), after
// planSandbox: the overlay where it is asked for (or auto finds the tree
// large) and can be had, else the copy with a warning (a note for auto)
// saying why. A run in the repository has no tree. --live with --tree
// overlay is refused (both asked on the command line); the overlay of
// a persona, the environment or the configuration gives way to it.
func (p *Plan) planTree(o PlanOptions, readOnly bool) error {
	if p.InRepo {
		return nil
	}
	p.Tree = TreeCopy
	if o.Session != nil {
		// A resumed session keeps the tree it was made with.
		if o.Session.Record.Tree == TreeOverlay {
			p.Tree, p.mount.Overlay = TreeOverlay, true
		}
		return nil
	}
	ch := treeAsked(o)
	if ch.Mode == TreeCopy {
		return nil
	}
	if ch.Mode == TreeAuto {
		if large, err := treeLarger(o.Root, AutoThreshold); err != nil || !large {
			// Small, or not known: the copy, said nowhere (it is what
			// auto means), and the overlay not even tried.
			return nil
		}
	}
	why := p.overlayUnavailable(o, readOnly)
	if why == "" && o.Live {
		if ch.Mode == TreeOverlay && ch.Origin == "--tree" {
			return &TreeError{Why: "--live cannot go with --tree overlay: live sync copies both ways between the project and a tree workforce can read, and the overlay's tree exists only in the harness's namespace; pass --tree copy"}
		}
		why = "--live needs the copy: the overlay's tree exists only in the harness's namespace"
	}
	if why != "" {
		msg := fmt.Sprintf("tree %s (%s): the project is copied instead: %s", ch.Mode, ch.Origin, why)
		if ch.Origin == defaultTreeOrigin {
			return nil
		}
		if ch.Mode == TreeAuto {
			p.Notes = append(p.Notes, msg)
		} else {
			p.Warnings = append(p.Warnings, msg)
		}
		return nil
	}
	p.Tree, p.mount.Overlay = TreeOverlay, true
	if o.Reuse {
		p.Notes = append(p.Notes, "--reuse is left out: the overlay starts in constant time, with no warm sandbox to refresh")
	}
	return nil
}

// overlayUnavailable says why the run of p, planned with o, cannot have
// the overlay, "" when it can; readOnly says the harness may not write
// its tree (harness.Invocation.TreeReadOnly).
func (p *Plan) overlayUnavailable(o PlanOptions, readOnly bool) string {
	c := p.Confine
	switch {
	case readOnly:
		return "the harness keeps its tree read-only, and the overlay's tree is the harness's to write"
	case o.Attempt:
		return "an evaluation's attempt reads its tree after the harness, which the overlay shows only inside the harness's namespaces"
	case runtime.GOOS != "linux":
		return "the overlay needs Linux's mount namespaces"
	case c == nil || !c.Confined:
		return "the overlay needs the harness confined (sandbox mode on or strict, where the system allows it)"
	case !c.Namespaces:
		return "the overlay needs the harness in namespaces of its own, which this system does not give"
	}
	if fi, err := os.Lstat(filepath.Join(o.Root, ".git")); err == nil && !fi.IsDir() {
		// The copy makes a git directory of the sandbox's own; the
		// overlay would leave the agent's git to write the real one.
		return "the project's .git is a file (a linked worktree, a submodule): the overlay's git would write the git directory it names, where the copy gives the sandbox one of its own"
	}
	if sessions := filepath.Clean(Dir(p.home)); pathutil.Within(o.Root, sessions) {
		// overlayfs refuses an upper layer inside its lower one.
		return fmt.Sprintf("the sessions directory %s lies in the project, and the overlay's upper layer cannot lie in its lower one", sessions)
	}
	for _, a := range o.Sandbox.Allow {
		if pathutil.Within(o.Root, a) || pathutil.Within(a, o.Root) {
			return fmt.Sprintf("the harness may write %s, in the project, which the overlay keeps unwritable by its real path", a)
		}
	}
	if ok, why := confine.OverlayAvailable(home.CacheDir(p.home)); !ok {
		return "this system does not allow it: " + why
	}
	return ""
}

// TreeError is a tree a run asks for that cannot go with the rest of what
// it asks: a usage error.
type TreeError struct{ Why string }

func (e *TreeError) Error() string { return e.Why }

// treeLarger reports whether the project at root holds more than n
// files, without walking the tree: the entry count of its git index
// where it has one, else a look that stops at n+1 entries.
func treeLarger(root string, n int) (bool, error) {
	if c, err := indexEntries(gitDirOf(root)); err == nil {
		return c > n, nil
	}
	return countBounded(root, n+1) > n, nil
}

// gitDirOf returns the git directory of the project at root: root/.git,
// or the directory a .git file names (a linked worktree, a submodule).
func gitDirOf(root string) string {
	dot := filepath.Join(root, ".git")
	fi, err := os.Stat(dot)
	if err != nil || fi.IsDir() {
		return dot
	}
	f, err := os.Open(dot)
	if err != nil {
		return dot
	}
	defer f.Close()
	line, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
	if !ok || dir == "" {
		return dot
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	return dir
}

// indexEntries returns the number of entries in the index of the git
// directory gitDir, read from its header alone.
func indexEntries(gitDir string) (int, error) {
	f, err := os.Open(filepath.Join(gitDir, "index"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var h [12]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return 0, err
	}
	return parseIndexHeader(h[:])
}

// errIndexHeader is the error of what is not a git index's header.
var errIndexHeader = errors.New("not a git index header")

// parseIndexHeader returns the entry count of a git index's header: the
// signature "DIRC", the version (2, 3 or 4), then the number of entries,
// each a 4-byte big-endian number.
func parseIndexHeader(h []byte) (int, error) {
	if len(h) < 12 || string(h[:4]) != "DIRC" {
		return 0, errIndexHeader
	}
	if v := binary.BigEndian.Uint32(h[4:8]); v < 2 || v > 4 {
		return 0, fmt.Errorf("git index version %d: %w", v, errIndexHeader)
	}
	n := binary.BigEndian.Uint32(h[8:12])
	if uint64(n) > uint64(maxInt) {
		return 0, errIndexHeader
	}
	return int(n), nil
}

// maxInt is the largest int.
const maxInt = int(^uint(0) >> 1)

// countBounded returns the number of entries below dir, .git left out,
// counting no further than limit: the cost is at most limit entries'
// listing, whatever the tree's size.
func countBounded(dir string, limit int) int {
	count := 0
	queue := []string{dir}
	for len(queue) > 0 && count < limit {
		d := queue[0]
		queue = queue[1:]
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		for count < limit {
			ents, err := f.ReadDir(256)
			for _, e := range ents {
				if e.Name() == ".git" && d == dir {
					continue
				}
				count++
				if e.IsDir() {
					queue = append(queue, filepath.Join(d, e.Name()))
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return min(count, limit)
}

// treeOf is the record's tree of a session made with o: overlay, or
// empty for the copy.
func treeOf(o mount.Options) TreeMode {
	if o.Overlay {
		return TreeOverlay
	}
	return ""
}
