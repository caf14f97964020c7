package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
)

// Change is a file the agent changed, as a sync-back of its session would
// bring it now.
type Change struct {
	// Path is the file's path relative to the project root, with
	// slashes.
	Path string `json:"path"`
	// Kind is created, updated or deleted.
	Kind string `json:"kind"`
	// Conflict says the real file changed too since the sandbox was made:
	// a sync-back keeps it and saves the agent's version aside.
	Conflict bool `json:"conflict,omitempty"`
}

// The kinds of a Change.
const (
	Created = "created"
	Updated = "updated"
	Deleted = "deleted"
)

// Changed returns the files the agent changed that sessions apply would
// bring (deletions and held configuration included), sorted by path; what
// never syncs back (hidden, ignored, read-only files, links, policy
// files) is left out, and so are files already applied.
func (s *Session) Changed() ([]Change, error) {
	box, err := mount.Open(s.Dir)
	if err != nil {
		return nil, err
	}
	return changesOf(box)
}

// Settled reports whether removing s loses none of the agent's work:
// its record (read with ReadRecord) says it synced back, and its sandbox
// holds no change a sync-back would bring (Changed is empty). A session
// whose record or sandbox cannot be read is not settled, nor is one held
// for review, left running or failed.
func (s *Session) Settled() bool {
	if s.Record.Phase != Synced {
		return false
	}
	changes, err := s.Changed()
	return err == nil && len(changes) == 0
}

func changesOf(box *mount.Sandbox) ([]Change, error) {
	rep, err := box.Sync(context.Background(), mount.SyncOptions{Deletes: true, DryRun: true, SyncConfig: true})
	if err != nil {
		return nil, err
	}
	var out []Change
	add := func(kind string, paths []string) {
		for _, p := range paths {
			out = append(out, Change{Path: p, Kind: kind})
		}
	}
	add(Created, rep.Created)
	add(Updated, rep.Updated)
	add(Deleted, rep.Deleted)
	add(Deleted, rep.Unapplied)
	for _, c := range rep.Conflicts {
		kind := Updated // or made by both sides
		if c.Saved == "" {
			kind = Deleted
		}
		out = append(out, Change{Path: c.Path, Kind: kind, Conflict: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// DiffOptions say what Diff shows.
type DiffOptions struct {
	// Only, when set, shows only the changes to the paths it accepts.
	Only func(rel string) bool
	// Stat shows a summary of the changes (git diff --stat) instead of
	// the patch.
	Stat bool
	// Color colours the output, for a terminal.
	Color bool
}

// ErrNoGit is returned by Diff where git is not installed.
var ErrNoGit = errors.New("showing the agent's changes needs git, which is not installed")

// Diff writes the agent's changes to w as a unified git diff: committed
// and uncommitted, against the tree the session started from, conflicts
// marked (see the package documentation for how it is made). With
// o.Stat it writes git's --stat summary, the conflicts listed after it.
// It needs git installed (ErrNoGit).
func (s *Session) Diff(w io.Writer, o DiffOptions) error {
	if !git.Installed() {
		return ErrNoGit
	}
	box, err := mount.Open(s.Dir)
	if err != nil {
		return err
	}
	all, err := changesOf(box)
	if err != nil {
		return err
	}
	var changes []Change
	for _, c := range all {
		if o.Only == nil || o.Only(c.Path) {
			changes = append(changes, c)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp("", "workforce-diff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// A repository of its own: the files are hashed as they are (no
	// filters), and nothing a repository configures runs (internal/git).
	ctx := context.Background()
	g := git.Repo{Dir: tmp, GitDir: filepath.Join(tmp, "git")}
	if _, err := (git.Repo{Dir: tmp}).Run(ctx, nil, "init", "-q", "--bare", "--template=", g.GitDir); err != nil {
		return err
	}

	// The files of each side, hashed at once.
	type side struct {
		path string // the file, or "" for none
		mode string
	}
	real := func(rel string) string { return filepath.Join(box.Root, filepath.FromSlash(rel)) }
	agent := func(rel string) string {
		// An overlay's: the upper layer's file, else the real one.
		path, _ := box.MergedPath(rel)
		return path
	}
	regular := func(path string) (string, bool) {
		if path == "" {
			return "", false
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return "", false
		}
		if fi.Mode().Perm()&0o111 != 0 {
			return "100755", true
		}
		return "100644", true
	}
	bases, agents := make([]side, len(changes)), make([]side, len(changes))
	var files []string
	for i, c := range changes {
		if c.Kind != Created || c.Conflict {
			if mode, ok := regular(real(c.Path)); ok {
				bases[i] = side{real(c.Path), mode}
				files = append(files, bases[i].path)
			}
		}
		if c.Kind != Deleted {
			if mode, ok := regular(agent(c.Path)); ok {
				agents[i] = side{agent(c.Path), mode}
				files = append(files, agents[i].path)
			}
		}
	}
	ids, err := hashFiles(ctx, g, files)
	if err != nil {
		return err
	}
	tree := func(name string, sides []side) (string, error) {
		var info bytes.Buffer
		for i, sd := range sides {
			if sd.path != "" {
				fmt.Fprintf(&info, "%s %s\t%s\x00", sd.mode, ids[sd.path], changes[i].Path)
			}
		}
		idx := git.Repo{Dir: tmp, GitDir: g.GitDir, IndexFile: filepath.Join(tmp, name+".index")}
		if info.Len() > 0 {
			if _, err := idx.Run(ctx, info.Bytes(), "update-index", "-z", "--add", "--index-info"); err != nil {
				return "", err
			}
		}
		out, err := idx.Run(ctx, nil, "write-tree")
		return strings.TrimSpace(string(out)), err
	}
	from, err := tree("start", bases)
	if err != nil {
		return err
	}
	to, err := tree("agent", agents)
	if err != nil {
		return err
	}

	color := "--color=never"
	if o.Color {
		color = "--color=always"
	}
	diff := func(paths []string) error {
		args := []string{"diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", color}
		if o.Stat {
			args = append(args, "--stat")
		} else {
			// Binary files as patches git apply takes, not as "Binary
			// files differ".
			args = append(args, "--binary")
		}
		args = append(args, from, to, "--")
		out, err := g.Run(ctx, nil, append(args, paths...)...)
		if err == nil {
			_, err = w.Write(out)
		}
		return err
	}
	mark := func(c Change) string {
		text := fmt.Sprintf("# conflict: %s changed in the repository too; shown against your version; apply keeps yours and saves the agent's", quote.Name(c.Path))
		if c.Kind == Deleted {
			text = fmt.Sprintf("# conflict: %s was deleted by the agent but changed in the repository; apply keeps yours", quote.Name(c.Path))
		}
		if o.Color {
			text = "\x1b[33m" + text + "\x1b[m"
		}
		return text + "\n"
	}
	if o.Stat {
		if err := diff(nil); err != nil {
			return err
		}
		for _, c := range changes {
			if c.Conflict {
				if _, err := io.WriteString(w, mark(c)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The patch, in path order: each conflict after its mark, the
	// changes between conflicts together.
	const chunk = 512 // paths in one command line
	var run []string
	flush := func() error {
		for len(run) > 0 {
			n := min(len(run), chunk)
			if err := diff(run[:n]); err != nil {
				return err
			}
			run = run[n:]
		}
		return nil
	}
	for _, c := range changes {
		if !c.Conflict {
			run = append(run, c.Path)
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		if _, err := io.WriteString(w, mark(c)); err != nil {
			return err
		}
		if err := diff([]string{c.Path}); err != nil {
			return err
		}
	}
	return flush()
}

// hashFiles writes the files into the repository g, as they are (no
// filters), and returns the object name of each.
func hashFiles(ctx context.Context, g git.Repo, files []string) (map[string]string, error) {
	ids := make(map[string]string, len(files))
	var plain []string
	for _, f := range files {
		if strings.ContainsAny(f, "\n\r") {
			// --stdin-paths reads a name a line, and drops a carriage
			// return at its end: such a name is hashed from standard
			// input.
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out, err := g.Run(ctx, data, "hash-object", "-w", "--no-filters", "--stdin")
			if err != nil {
				return nil, err
			}
			ids[f] = strings.TrimSpace(string(out))
			continue
		}
		plain = append(plain, f)
	}
	if len(plain) == 0 {
		return ids, nil
	}
	out, err := g.Run(ctx, []byte(strings.Join(plain, "\n")+"\n"), "hash-object", "-w", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(plain) {
		return nil, fmt.Errorf("git hash-object: %d names for %d files", len(lines), len(plain))
	}
	for i, f := range plain {
		ids[f] = lines[i]
	}
	return ids, nil
}
