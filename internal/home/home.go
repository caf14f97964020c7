// Package home owns the places workforce keeps things: the workforce home
// ($AGENT_WORKFORCE_HOME, else ~/.agentworkforce/workforce), its
// config.json, its cache paths, and, in the user's repositories, the
// project root (the nearest directory holding a root marker) and the
// project layer directory (.agentworkforce/workforce/personas).
//
// These were persona's, and the command layer, mount and skill reached into
// persona for them; they are facts about the file system layout, not about
// personas, so they live here, below every package that needs them. home
// imports nothing of workforce but internal/diag, with which it reports a
// broken config.json at its line and column.
//
// The layout of the session directories (<home>/sessions, <home>/warm) is
// not here: it belongs to the package that runs sessions.
//
// home imports nothing of workforce but internal/diag, with which it
// reports a broken config.json, confine, whose sandbox modes
// config.json names ("sandbox"), and internal/netspec, which checks the
// words of its network policy ("network": mode, allow, presets; a
// persona or a batch task may only narrow it, the egress package says
// what it means).
package home

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// Env is the environment variable naming the workforce home directory.
const Env = "AGENT_WORKFORCE_HOME"

// ProjectDir is the project layer's directory, relative to a directory
// between the working directory and the project root.
const ProjectDir = ".agentworkforce/workforce/personas"

// Dir returns the workforce home: $AGENT_WORKFORCE_HOME, else
// ~/.agentworkforce/workforce, the same place the original tool used.
func Dir() (string, error) {
	if h := os.Getenv(Env); h != "" {
		return filepath.Abs(h)
	}
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory (set %s): %w", Env, err)
	}
	return filepath.Join(u, ".agentworkforce", "workforce"), nil
}

// UserDir returns the default user persona directory of home,
// <home>/personas.
func UserDir(home string) string { return filepath.Join(home, "personas") }

// CacheDir returns the cache directory of home, <home>/cache: what
// workforce can fetch or probe again.
func CacheDir(home string) string { return filepath.Join(home, "cache") }

// SkillCache returns the directory of the cache of fetched skills,
// <home>/cache/skills.
func SkillCache(home string) string { return filepath.Join(CacheDir(home), "skills") }

// OverlayListings returns the directory of the overlay's listing caches,
// <home>/cache/overlay-listings: one file a project, what the listing of
// its directories for the whiteouts found (package mount).
func OverlayListings(home string) string { return filepath.Join(CacheDir(home), "overlay-listings") }

// HarnessVersions returns the file caching the versions probed of the
// installed harnesses, <home>/cache/harness-versions.json.
func HarnessVersions(home string) string {
	return filepath.Join(CacheDir(home), "harness-versions.json")
}

// WorkerDir returns the directory of a queue worker of home,
// <home>/worker: its tasks' directories and the repositories it fetches
// (repos/).
func WorkerDir(home string) string { return filepath.Join(home, "worker") }

// CreateDir returns the directory of workforce create's staging
// directories, <home>/create: one a create, removed when it ends.
func CreateDir(home string) string { return filepath.Join(home, "create") }

// TreeModes are the values of "tree" in config.json, run --tree and a
// persona's mount.tree: copy the project into the sandbox, show it
// through an overlay, or choose by the tree's size.
var TreeModes = []string{"copy", "overlay", "auto"}

// Config is <home>/config.json.
type Config struct {
	// PersonaDirs are the user persona directories, highest first. Unset
	// means [<home>/personas].
	PersonaDirs []string `json:"personaDirs,omitempty"`
	// Review holds each run's work for review, as run --review does.
	Review bool `json:"review,omitempty"`
	// Tree is how runs show the project to the harness ("tree": "copy",
	// "overlay" or "auto"; run --tree), empty when the file sets none.
	Tree string `json:"tree,omitempty"`
	// Results bounds the results one-shot runs leave in <home>/results
	// ("results": {"maxAge": "720h", "maxCount": 500}).
	Results Results `json:"-"`
	// Sandbox is the write sandbox of runs ("sandbox": {"mode": "on",
	// "allow": [...]}, or a bare mode, "sandbox": "strict").
	Sandbox Sandbox `json:"-"`
	// Network is the user's network policy of confined runs ("network":
	// {"mode": "allowlist", "allow": [...], "presets": ["dev"]}), nil when
	// the file sets none. It is the user's word: it may widen the
	// default, where a persona or a batch task may only narrow it.
	Network *netspec.Spec `json:"-"`
	// Other keys are kept as they are when the file is rewritten.
	rest map[string]json.RawMessage
}

// ConfigPath returns the path of the config file in home.
func ConfigPath(home string) string { return filepath.Join(home, "config.json") }

// ReadConfig reads <home>/config.json. A missing file is the default
// configuration. Errors in the file are *diag.Diagnostic values at their
// line and column or field.
func ReadConfig(home string) (*Config, error) {
	path := ConfigPath(home)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, diag.JSONError(path, data, err)
	}
	c := &Config{rest: raw}
	if v, ok := raw["personaDirs"]; ok {
		if err := json.Unmarshal(v, &c.PersonaDirs); err != nil {
			return nil, &diag.Diagnostic{File: path, Field: "personaDirs", Message: "must be a list of directory paths"}
		}
		delete(raw, "personaDirs")
	}
	if v, ok := raw["review"]; ok { // kept in raw: written back as read
		if err := json.Unmarshal(v, &c.Review); err != nil {
			return nil, &diag.Diagnostic{File: path, Field: "review", Message: "must be true or false"}
		}
	}
	if v, ok := raw["tree"]; ok { // kept in raw too
		if err := json.Unmarshal(v, &c.Tree); err != nil || !slices.Contains(TreeModes, c.Tree) {
			return nil, &diag.Diagnostic{File: path, Field: "tree", Message: `must be "copy", "overlay" or "auto"`}
		}
	}
	if v, ok := raw["results"]; ok { // kept in raw too
		r, err := readResults(path, v)
		if err != nil {
			return nil, err
		}
		c.Results = r
	}
	if v, ok := raw["sandbox"]; ok { // kept in raw too
		sb, err := readSandbox(path, v)
		if err != nil {
			return nil, err
		}
		c.Sandbox = sb
	}
	if v, ok := raw["network"]; ok { // kept in raw too
		n, err := readNetwork(path, data, v)
		if err != nil {
			return nil, err
		}
		c.Network = n
	}
	return c, nil
}

// networkShape is what "network" must look like, for its errors.
const networkShape = `must be an object such as {"mode": "allowlist", "allow": ["example.com", "*.example.org:443"], "presets": ["dev"]}`

// readNetwork reads the "network" value v of the config file path, whose
// content is data (for the line of a wrong value).
func readNetwork(path string, data []byte, v json.RawMessage) (*netspec.Spec, error) {
	fail := func(field, msg string) error {
		d := &diag.Diagnostic{File: path, Field: field, Message: msg}
		key := strings.ReplaceAll(strings.ReplaceAll(field, "[", "."), "]", "")
		if off, ok := diag.Positions(data)[key]; ok {
			d.Line, d.Column = diag.Position(data, off)
		}
		return d
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return nil, fail("network", networkShape)
	}
	var n netspec.Spec
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		switch k {
		case "mode":
			if err := json.Unmarshal(v, &n.Mode); err != nil {
				return nil, fail("network.mode", `must be "allowlist", "open" or "none"`)
			}
		case "allow":
			if err := json.Unmarshal(v, &n.Allow); err != nil || n.Allow == nil {
				return nil, fail("network.allow", "must be a list of HOST or HOST:PORT")
			}
		case "presets":
			var p []string
			if err := json.Unmarshal(v, &p); err != nil || p == nil {
				return nil, fail("network.presets", `must be a list of preset names, such as ["dev"] ([] for none)`)
			}
			n.Presets = &p
		default:
			return nil, fail("network."+k, "unknown key: network takes mode, allow and presets")
		}
	}
	if field, err := n.Check(); err != nil {
		return nil, fail("network."+field, err.Error())
	}
	return &n, nil
}

// Sandbox is "sandbox" in config.json: the write sandbox's mode, the
// paths it lets the harness write besides its own, and the paths it keeps
// the harness from reading (denyRead) or lets it read (allowRead).
type Sandbox struct {
	// Mode is the mode set, nil when none is.
	Mode *confine.Mode
	// Allow are the paths of "allow", absolute and clean ("~/" is the
	// user's home directory). Whether they exist, and may be allowed, is
	// checked when a run uses them.
	Allow []string
	// DenyRead are the paths of "denyRead", unreadable by a confined
	// harness besides the default ones; AllowRead those of "allowRead",
	// readable again below a denied path (and, in strict mode, besides
	// the system directories). Absolute and clean, as Allow.
	DenyRead, AllowRead []string
}

// sandboxShape is what "sandbox" must look like, for its errors.
const sandboxShape = `must be a mode ("on", "off" or "strict") or an object such as {"mode": "on", "allow": ["~/.cache/go-build"]}`

// readSandbox reads the "sandbox" value v of the config file path: a
// mode, or an object with mode, allow, denyRead and allowRead.
func readSandbox(path string, v json.RawMessage) (Sandbox, error) {
	mode := func(field string, v json.RawMessage) (*confine.Mode, error) {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, &diag.Diagnostic{File: path, Field: field, Message: `must be "on", "off" or "strict"`}
		}
		m, err := confine.ParseMode(s)
		if err != nil {
			return nil, &diag.Diagnostic{File: path, Field: field, Message: err.Error()}
		}
		return &m, nil
	}
	var sb Sandbox
	if len(v) > 0 && v[0] == '"' {
		m, err := mode("sandbox", v)
		sb.Mode = m
		return sb, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return Sandbox{}, &diag.Diagnostic{File: path, Field: "sandbox", Message: sandboxShape}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		switch k {
		case "mode":
			m, err := mode("sandbox.mode", v)
			if err != nil {
				return Sandbox{}, err
			}
			sb.Mode = m
		case "allow", "denyRead", "allowRead":
			var paths []string
			if err := json.Unmarshal(v, &paths); err != nil {
				return Sandbox{}, &diag.Diagnostic{File: path, Field: "sandbox." + k, Message: "must be a list of absolute paths"}
			}
			list := map[string]*[]string{"allow": &sb.Allow, "denyRead": &sb.DenyRead, "allowRead": &sb.AllowRead}[k]
			for i, p := range paths {
				abs, err := allowPath(p)
				if err != nil {
					return Sandbox{}, &diag.Diagnostic{File: path, Field: fmt.Sprintf("sandbox.%s[%d]", k, i), Message: err.Error()}
				}
				*list = append(*list, abs)
			}
		default:
			return Sandbox{}, &diag.Diagnostic{File: path, Field: "sandbox." + k, Message: "unknown key: sandbox takes mode, allow, denyRead and allowRead"}
		}
	}
	return sb, nil
}

// allowPath returns p, a path of sandbox.allow, absolute and clean: "~"
// and "~/..." name the user's home directory; any other path must be
// absolute.
func allowPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		u, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: cannot find the home directory: %w", p, err)
		}
		p = filepath.Join(u, p[1:])
	}
	if p == "" || strings.ContainsRune(p, 0) || !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path (nor one starting with ~/)", p)
	}
	return filepath.Clean(p), nil
}

// Results are the bounds of "results" in config.json: the results of
// one-shot runs older than MaxAge, and those beyond the newest MaxCount,
// are pruned. Nil is the default; zero is no limit.
type Results struct {
	MaxAge   *time.Duration
	MaxCount *int
}

// readResults reads the "results" object v of the config file path.
func readResults(path string, v json.RawMessage) (Results, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return Results{}, &diag.Diagnostic{File: path, Field: "results", Message: `must be an object such as {"maxAge": "720h", "maxCount": 500}`}
	}
	var r Results
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		switch k {
		case "maxAge":
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return Results{}, &diag.Diagnostic{File: path, Field: "results.maxAge", Message: `must be a duration string such as "720h" or "90m" (0 for no limit)`}
			}
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return Results{}, &diag.Diagnostic{File: path, Field: "results.maxAge", Message: fmt.Sprintf(`%q is not a duration such as "720h" or "90m" (0 for no limit)`, s)}
			}
			r.MaxAge = &d
		case "maxCount":
			var n int
			if err := json.Unmarshal(v, &n); err != nil || n < 0 {
				return Results{}, &diag.Diagnostic{File: path, Field: "results.maxCount", Message: fmt.Sprintf("must be a whole number, 0 or more (0 for no limit), not %s", v)}
			}
			r.MaxCount = &n
		default:
			return Results{}, &diag.Diagnostic{File: path, Field: "results." + k, Message: "unknown key: results takes maxAge and maxCount"}
		}
	}
	return r, nil
}

// Dirs returns the persona directories of the configuration as absolute
// paths: "~" expands to the user's home directory and relative entries are
// relative to home.
func (c *Config) Dirs(home string) []string {
	if c.PersonaDirs == nil {
		return []string{UserDir(home)}
	}
	dirs := make([]string, 0, len(c.PersonaDirs))
	for _, d := range c.PersonaDirs {
		dirs = append(dirs, expandDir(home, d))
	}
	return dirs
}

func expandDir(home, d string) string {
	if d == "~" || strings.HasPrefix(d, "~/") {
		if u, err := os.UserHomeDir(); err == nil {
			d = filepath.Join(u, d[1:])
		}
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(home, d)
	}
	return filepath.Clean(d)
}

// AddDir adds dir to the persona directories, at the end, or first when
// first is set. It reports false when dir was already listed.
func (c *Config) AddDir(home, dir string, first bool) bool {
	dirs := c.Dirs(home)
	dir = expandDir(home, dir)
	if slices.Contains(dirs, dir) {
		return false
	}
	if first {
		dirs = append([]string{dir}, dirs...)
	} else {
		dirs = append(dirs, dir)
	}
	c.PersonaDirs = dirs
	return true
}

// RemoveDir removes dir from the persona directories. It reports false when
// dir was not listed.
func (c *Config) RemoveDir(home, dir string) bool {
	dirs := c.Dirs(home)
	dir = expandDir(home, dir)
	i := slices.Index(dirs, dir)
	if i < 0 {
		return false
	}
	c.PersonaDirs = slices.Delete(dirs, i, i+1)
	return true
}

// WriteConfig writes c to <home>/config.json atomically, keeping keys it
// does not know.
func WriteConfig(home string, c *Config) error {
	out := map[string]any{}
	for k, v := range c.rest {
		out[k] = v
	}
	dirs := c.PersonaDirs
	if dirs == nil {
		dirs = []string{}
	}
	out["personaDirs"] = dirs
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(ConfigPath(home), append(data, '\n'), 0o644, renameio.WithTempDir(filepath.Dir(ConfigPath(home))))
}
