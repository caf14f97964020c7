package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/persona"
	"golang.org/x/mod/semver"
)

// Status is what Check found about one harness.
type Status struct {
	Harness   string `json:"harness"`
	Installed bool   `json:"installed"`
	Path      string `json:"path,omitempty"`
	Version   string `json:"version,omitempty"`
	Package   string `json:"package"`
}

// VersionCache remembers what each harness binary said to --version, keyed
// by the binary's resolved path, size, modification and change times and
// inode, so that
// commands that need a harness's version (context and run pick the
// instruction discovery profile by it) ask each installed binary once.
// The zero value, with no File, remembers nothing.
type VersionCache struct {
	// File is the cache file (JSON), written atomically.
	File string
}

type versionEntry struct {
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtimeNs"`
	// Change and Inode tell a reinstalled binary from the old one when
	// size and modification time are the same (npm gives every file it
	// installs the same fixed time).
	Change  int64  `json:"ctimeNs"`
	Inode   uint64 `json:"inode"`
	Version string `json:"version"`
}

type versionFile struct {
	Binaries map[string]versionEntry `json:"binaries"`
}

// Installed finds harness on the PATH of env and reports its version: the
// first line of `HARNESS --version`, from the cache when the binary has not
// changed since it was asked.
func (vc VersionCache) Installed(ctx context.Context, harness string, env []string) Status {
	st := Status{Harness: harness, Package: Packages[harness]}
	p, err := LookPath(harness, env)
	if err != nil {
		return st
	}
	st.Installed, st.Path = true, p
	real, entry, ok := identify(p)
	// By harness too: one binary can answer as several (a multi-call
	// program, a test's stand-ins), each with its own version.
	key := harness + ":" + real
	cache := vc.load()
	if ok {
		if e, hit := cache.Binaries[key]; hit && e.Size == entry.Size && e.ModTime == entry.ModTime && e.Change == entry.Change && e.Inode == entry.Inode {
			st.Version = e.Version
			return st
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, p, "--version")
	// Not in the project: a harness started there may read, or write,
	// what it finds.
	cmd.Dir = os.TempDir()
	cmd.Env = ProcessEnv(env, cmd.Dir)
	// gemini --version writes into its home (gemini.go), codex --version
	// its arg0 lock into $CODEX_HOME/tmp (measured, codex 0.169.0): a
	// throwaway home of their own, not the user's.
	if v := map[string]string{persona.HarnessGemini: "GEMINI_CLI_HOME", persona.HarnessCodex: "CODEX_HOME"}[harness]; v != "" {
		if home, err := os.MkdirTemp("", "workforce-"+harness+"-version-"); err == nil {
			defer os.RemoveAll(home)
			cmd.Env = append(cmd.Env, v+"="+home)
		}
	}
	b, err := cmd.Output()
	st.Version, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	if err != nil || st.Version == "" || !ok || vc.File == "" {
		return st
	}
	entry.Version = st.Version
	cache.Binaries[key] = entry
	vc.save(cache)
	return st
}

// identify returns the real path of the binary at path (its links
// resolved) and its size, times and inode.
func identify(path string) (string, versionEntry, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", versionEntry{}, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", versionEntry{}, false
	}
	e := versionEntry{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	e.Change, e.Inode = changeAndInode(fi)
	return real, e, true
}

func (vc VersionCache) load() *versionFile {
	f := &versionFile{}
	if vc.File != "" {
		if data, err := os.ReadFile(vc.File); err == nil {
			_ = json.Unmarshal(data, f) // a damaged cache is rebuilt
		}
	}
	if f.Binaries == nil {
		f.Binaries = map[string]versionEntry{}
	}
	return f
}

// save writes the cache; failing to is not an error, only a cost.
func (vc VersionCache) save(f *versionFile) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(vc.File), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	_ = renameio.WriteFile(vc.File, append(data, '\n'), 0o644, renameio.WithTempDir(filepath.Dir(vc.File)))
}

// Check looks for every harness on the PATH of env and asks each found one
// for its version.
func (vc VersionCache) Check(ctx context.Context, env []string) []Status {
	var out []Status
	for _, h := range persona.Harnesses {
		out = append(out, vc.Installed(ctx, h, env))
	}
	return out
}

// Check looks for every harness on the PATH of env and asks each found one
// for its version, without a cache.
func Check(ctx context.Context, env []string) []Status {
	return VersionCache{}.Check(ctx, env)
}

// Profile returns the instruction discovery profile of the installed
// version of harness (discover.ForVersion), the harness's status, and a
// note when that version was not measured. A harness that is not installed
// gets its default profile.
func (vc VersionCache) Profile(ctx context.Context, harness string, env []string) (discover.Profile, Status, string) {
	st := vc.Installed(ctx, harness, env)
	p, note := discover.ForVersion(harness, st.Version)
	return p, st, note
}

// MeasuredVersions are the versions of harness h workforce's tables were
// measured on (the flag mapping, the output parser, the state list:
// Measured; instruction discovery: discover's profiles), sorted.
func MeasuredVersions(h string) []string {
	var out []string
	if m := Measured[h]; m != "" {
		out = append(out, m)
	}
	for _, p := range discover.Profiles {
		if p.Harness == h {
			out = append(out, p.Measured...)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return semver.Compare("v"+a, "v"+b) })
	return slices.Compact(out)
}

// VersionMeasured says whether version (what `HARNESS --version` prints)
// of harness h is of a measured release family: its major.minor is that
// of a version MeasuredVersions lists. A patch release of a measured
// family counts (harnesses ship one a day); a family never measured does
// not: the flag mapping, the output parser and the state list depend on
// the version as much as discovery does. known is false when the version
// cannot be read.
func VersionMeasured(h, version string) (measured, known bool) {
	v := discover.ParseVersion(version)
	if v == "" {
		return false, false
	}
	for _, m := range MeasuredVersions(h) {
		if semver.MajorMinor("v"+m) == semver.MajorMinor("v"+v) {
			return true, true
		}
	}
	return false, true
}

// UnmeasuredNote is what a run says of version of harness h when its
// release family was never measured.
func UnmeasuredNote(h, version string) string {
	return fmt.Sprintf("%s %s is of a release family workforce never measured (measured: %s): its flags, output, state and instruction files may differ; check it with make e2e (docs/e2e.md)",
		h, discover.ParseVersion(version), strings.Join(MeasuredVersions(h), ", "))
}
