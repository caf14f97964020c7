package mount

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"
	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/internal/git"
)

// ManifestFile is the name, in a sandbox directory, of the sandbox's
// durable state: the manifest of the real files and links at copy time
// (or as the sync that applied them left them), and what sync-back needs
// besides (the copy rules, the materialized files, the links made again,
// the paths left out), so that a sandbox can be synced after the process
// that made it is gone.
const ManifestFile = "manifest.json"

// manifestFormat is the version of the manifest file's format. A file of a
// higher format was written by a newer workforce and is refused. Format 2
// added the real tree's links and the sandbox side of applied files
// (manifestFile.Box); format 1 is read as a manifest without them. Format
// 3 is an overlay sandbox's (manifestHeader.Overlay), which an older
// workforce must not take for a copy; a copy's manifest is still format 2.
const manifestFormat = 3

// copyFormat is the format of a copy's manifest.
const copyFormat = 2

// manifestHeader is the manifest file's first JSON value; the files follow,
// one JSON value per line, so that reading and writing stream.
type manifestHeader struct {
	Format       int               `json:"format"`
	Root         string            `json:"root"`
	Workdir      string            `json:"workdir"`
	Ignore       []string          `json:"ignore"`
	Readonly     []string          `json:"readonly"`
	Hide         []string          `json:"hide"`
	HidePaths    []string          `json:"hidePaths"`
	Materialized []string          `json:"materialized"`
	Links        map[string]string `json:"links"`
	Skipped      []string          `json:"skipped"`
	// GitStart is the commit the sandbox's HEAD named when it was made
	// (empty without a repository or a commit): where the agent's
	// commits start.
	GitStart string `json:"gitStart,omitempty"`
	// GitDirs are the project's git directories under another name
	// than .git (git.go), never synced.
	GitDirs []string `json:"gitDirs,omitempty"`
	// PolicyPaths and HeldPaths are the sandbox's own paths kept back as
	// policy files and held as executable configuration (keepLinked).
	PolicyPaths []string `json:"policyPaths,omitempty"`
	HeldPaths   []string `json:"heldPaths,omitempty"`
	// Overlay is an overlay sandbox's (format 3): its upper and work
	// directories are UpperDir and WorkDir in the sandbox directory.
	Overlay *overlayHeader `json:"overlay,omitempty"`
	Files   int            `json:"files"`
}

// overlayHeader is what an overlay sandbox keeps of its OverlayLayers.
type overlayHeader struct {
	Whiteouts []string `json:"whiteouts"`
	Started   int64    `json:"started"` // nanoseconds since the epoch
}

// manifestFile is one real file, or symbolic link, at copy time (or as
// the sync that applied it left it). A path that is not valid UTF-8,
// which JSON strings cannot hold, is in PathBytes (base64).
type manifestFile struct {
	Path      string      `json:"p,omitempty"`
	PathBytes []byte      `json:"b,omitempty"`
	Size      int64       `json:"s"`
	MTime     int64       `json:"t"` // nanoseconds since the epoch
	Mode      fs.FileMode `json:"m"`
	Readonly  bool        `json:"r,omitempty"`
	// Box is the sandbox's file where it is not as the real one
	// (Sandbox.boxBase): size, time and mode.
	Box *[3]int64 `json:"x,omitempty"`
}

// SetHome names the workforce home of a sandbox opened from its state
// (Open), which does not keep it: the listing of an overlay's project
// that its read watch makes (WatchReads) then uses, and updates, the
// home's listing cache, as Create's did.
func (s *Sandbox) SetHome(home string) { s.home = home }

// Save writes the sandbox's state to ManifestFile in its directory,
// durably: a temporary file, synced, renamed into place, and the directory
// synced.
func (s *Sandbox) Save() error {
	path := filepath.Join(s.Dir, ManifestFile)
	t, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o600), renameio.WithTempDir(filepath.Dir(path)))
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer t.Cleanup()
	w := bufio.NewWriterSize(t, 64<<10)
	enc := json.NewEncoder(w)
	wd, _ := filepath.Rel(s.Tree, s.Workdir)
	h := manifestHeader{
		Format: copyFormat, Root: s.Root, Workdir: filepath.ToSlash(wd),
		Ignore: s.rules.ignLines, Readonly: s.rules.roLines, Hide: s.rules.hide, HidePaths: s.rules.hidePaths,
		Links: s.links, Skipped: s.skipped, GitStart: s.gitStart, GitDirs: s.gitDirs,
		PolicyPaths: s.policyPaths, HeldPaths: s.heldPaths,
	}
	if ov := s.Overlay; ov != nil {
		h.Format = manifestFormat
		h.Overlay = &overlayHeader{Whiteouts: ov.Whiteouts, Started: ov.Started.UnixNano()}
	}
	// The files in the order the copy met them, from base: the harness
	// need not wait for the manifest's map, nor for 20,000 paths sorted.
	// When the manifest has changed since (live sync), or was read from
	// a file, sorted.
	fromBase := s.manifestOK != nil && !s.edited
	if fromBase {
		h.Files = s.baseFiles + s.baseLinks
	} else {
		h.Files = len(s.realFiles()) + len(s.copyLinks())
	}
	for rel := range s.materialize {
		h.Materialized = append(h.Materialized, rel)
	}
	sort.Strings(h.Materialized)
	if err := enc.Encode(h); err != nil {
		return err
	}
	line := make([]byte, 0, 256)
	write := func(rel string, e entry, box *entry) error {
		line = appendManifestFile(line[:0], rel, e, len(s.readonly) > 0 && s.readonly[rel], box)
		_, err := w.Write(line)
		return err
	}
	if fromBase {
		for b := range s.base.all() {
			if t := b.st.mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFLNK {
				continue // a directory
			}
			if err := write(b.rel, entryOf(&b.st), nil); err != nil {
				return err
			}
		}
	} else {
		for _, m := range []map[string]entry{s.realFiles(), s.copyLinks()} {
			rels := make([]string, 0, len(m))
			for rel := range m {
				rels = append(rels, rel)
			}
			sort.Strings(rels)
			for _, rel := range rels {
				var box *entry
				if b, ok := s.boxBase[rel]; ok {
					box = &b
				}
				if err := write(rel, m[rel], box); err != nil {
					return err
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := t.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return syncDir(s.Dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// ManifestError reports a manifest file that cannot be read.
type ManifestError struct {
	Path string
	Err  error
}

func (e *ManifestError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *ManifestError) Unwrap() error { return e.Err }

// Open reads the sandbox in dir from its ManifestFile, for a sync-back
// after the process that made the sandbox is gone.
func Open(dir string) (*Sandbox, error) {
	path := filepath.Join(dir, ManifestFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, &ManifestError{path, err}
	}
	defer f.Close()
	s, err := readManifest(dir, bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, &ManifestError{path, err}
	}
	return s, nil
}

func readManifest(dir string, r *bufio.Reader) (*Sandbox, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var h manifestHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("not a session manifest: %v", err)
	}
	switch {
	case h.Format > manifestFormat:
		return nil, fmt.Errorf("written by a newer workforce (format %d; this one reads format %d)", h.Format, manifestFormat)
	case h.Format < 1:
		return nil, fmt.Errorf("not a session manifest: no format")
	case !filepath.IsAbs(h.Root):
		return nil, fmt.Errorf("the project root %q is not an absolute path", h.Root)
	case !safeRel(h.Workdir):
		return nil, fmt.Errorf("the working directory %q is not inside the sandbox", h.Workdir)
	case h.Files < 0:
		return nil, fmt.Errorf("a negative file count")
	case h.GitStart != "" && !git.IsObjectName(h.GitStart):
		return nil, fmt.Errorf("the start commit %q is not an object name", h.GitStart)
	}
	s := &Sandbox{
		Dir: dir, Tree: filepath.Join(dir, TreeDir), Root: h.Root,
		rules:    rulesFrom(h.Ignore, h.Readonly, h.Hide, h.HidePaths),
		manifest: make(map[string]entry, min(h.Files, 1<<20)), readonly: map[string]bool{},
		realLinks: map[string]entry{}, boxBase: map[string]entry{},
		materialize: map[string]bool{}, links: map[string]string{}, skipped: h.Skipped,
		gitStart: h.GitStart,
	}
	s.Workdir = filepath.Join(s.Tree, filepath.FromSlash(h.Workdir))
	if ov := h.Overlay; ov != nil {
		if h.Format < 3 {
			return nil, fmt.Errorf("an overlay in a format %d manifest", h.Format)
		}
		for _, rel := range ov.Whiteouts {
			if !safeRel(rel) || rel == "." {
				return nil, fmt.Errorf("whiteout %q is not inside the project", rel)
			}
		}
		if !sort.StringsAreSorted(ov.Whiteouts) {
			return nil, fmt.Errorf("the whiteouts are not sorted")
		}
		s.Overlay = &OverlayLayers{
			Upper: filepath.Join(dir, UpperDir), Work: filepath.Join(dir, WorkDir),
			Whiteouts: ov.Whiteouts, Started: time.Unix(0, ov.Started),
		}
	}
	for _, rel := range h.Materialized {
		if !safeRel(rel) {
			return nil, fmt.Errorf("materialized file %q is not inside the sandbox", rel)
		}
		s.materialize[rel] = true
	}
	for rel, target := range h.Links {
		if !safeRel(rel) {
			return nil, fmt.Errorf("link %q is not inside the sandbox", rel)
		}
		s.links[rel] = target
	}
	if !sort.StringsAreSorted(s.skipped) {
		return nil, fmt.Errorf("the skipped paths are not sorted")
	}
	for _, rel := range h.GitDirs {
		if !safeRel(rel) || rel == "." {
			return nil, fmt.Errorf("git directory %q is not inside the sandbox", rel)
		}
	}
	s.gitDirs = gitDirs(nil).add(h.GitDirs...)
	for _, rel := range append(append([]string(nil), h.PolicyPaths...), h.HeldPaths...) {
		// A backslash is a name's own character here (a file the
		// copy may leave out): only the kept path's place matters.
		if !safeRel(strings.ReplaceAll(rel, `\`, "_")) {
			return nil, fmt.Errorf("kept path %q is not inside the project", rel)
		}
	}
	s.policyPaths, s.heldPaths = h.PolicyPaths, h.HeldPaths
	for i := 0; i < h.Files; i++ {
		var m manifestFile
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("file %d of %d: %v (truncated?)", i+1, h.Files, err)
		}
		if m.Path == "" && len(m.PathBytes) > 0 {
			m.Path = string(m.PathBytes)
		}
		if !safeRel(m.Path) || m.Path == "." {
			return nil, fmt.Errorf("file %q is not inside the project", m.Path)
		}
		if dotGitAlias(m.Path) {
			// Listed by an older workforce: below a name taken for
			// .git, it never crosses (dotgit.go), not even as a
			// deletion.
			continue
		}
		_, dup := s.manifest[m.Path]
		if _, link := s.realLinks[m.Path]; dup || link {
			return nil, fmt.Errorf("file %q is listed twice", m.Path)
		}
		e := entry{size: m.Size, mtime: m.MTime, mode: m.Mode}
		switch {
		case m.Size < 0:
			return nil, fmt.Errorf("file %q: a negative size", m.Path)
		case m.Mode.Type() == fs.ModeSymlink && h.Format >= 2 && !m.Readonly && m.Box == nil:
			s.realLinks[m.Path] = e
			continue
		case !m.Mode.IsRegular():
			return nil, fmt.Errorf("file %q: not a regular file's size and mode", m.Path)
		}
		s.manifest[m.Path] = e
		if m.Readonly {
			s.readonly[m.Path] = true
		}
		if b := m.Box; b != nil {
			box := entry{size: b[0], mtime: b[1], mode: fs.FileMode(b[2])}
			if h.Format < 2 || box.size < 0 || b[2] < 0 || !box.mode.IsRegular() || m.Readonly {
				return nil, fmt.Errorf("file %q: not a regular file's size and mode in the sandbox", m.Path)
			}
			s.boxBase[m.Path] = box
		}
	}
	if dec.More() {
		return nil, fmt.Errorf("more files than the %d announced", h.Files)
	}
	return s, nil
}

// safeRel reports whether rel is a clean relative slash path that stays
// inside its base.
func safeRel(rel string) bool {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || strings.ContainsRune(rel, 0) {
		return false
	}
	if rel == "." {
		return true
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// appendManifestFile appends the manifest line of the file rel, and of
// the sandbox side box when not nil, as encoding/json would write a
// manifestFile, only faster: a manifest holds a line for every file of the
// project.
func appendManifestFile(b []byte, rel string, e entry, readonly bool, box *entry) []byte {
	if utf8.ValidString(rel) {
		b = append(b, `{"p":`...)
		b = appendJSONString(b, rel)
	} else {
		b = append(b, `{"b":"`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(rel))
		b = append(b, '"')
	}
	b = append(b, `,"s":`...)
	b = strconv.AppendInt(b, e.size, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, e.mtime, 10)
	b = append(b, `,"m":`...)
	b = strconv.AppendUint(b, uint64(e.mode), 10)
	if readonly {
		b = append(b, `,"r":true`...)
	}
	if box != nil {
		b = append(b, `,"x":[`...)
		b = strconv.AppendInt(b, box.size, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, box.mtime, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(box.mode), 10)
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}

// appendJSONString appends s, valid UTF-8, as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
