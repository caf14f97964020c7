package session

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
)

// The read policy of a confined run (confine.ReadPolicy): the harness
// reads its sandbox and the system, not the user's secrets. Denied by
// default (readDefaults): the credentials of the user's tools in the home
// directory, every harness's own configuration there (the run uses its
// session's copy, seeded by workforce, unconfined, before the launch),
// the workforce home but this session's directory (other sessions,
// results, history, batches, the worker's queue credentials and clones),
// and the real project (the sandbox is the agent's view). config.json's
// sandbox.denyRead, --sandbox-deny-read and what the user's own harness
// configuration denies (harness.ReadUserPolicy: Claude Code's
// sandbox.filesystem.denyRead, codex's permission profile) add to it.
//
// Still readable, because harnesses and tools need them: this session's
// directory (the tree, tmp, the harness's configuration and state), the
// object stores the sandbox's git borrows (the real repository's
// objects/ and its alternates chain, read from the real repository: the
// sandbox's own alternates file is the agent's to write), the harness's
// resolved install directory and its interpreter's (a #! line, through
// env), ~/.gitconfig and ~/.config/git/config, and config.json's
// sandbox.allowRead. What the run may write (the writable set, with
// --sandbox-allow) is readable too.
//
// Strict mode reads only the system directories (confine.StrictRoots),
// the user's Go module cache when the session's GOPROXY reads it, and the
// still-readable paths above.
//
// Nobody but the user widens the policy: a persona (the project's layer
// included) and a batch or queue task have no field that names a read
// path; only config.json and the command line do.

// ReadEntry is a path of a run's read policy and where it came from.
type ReadEntry struct {
	Path string `json:"path"`
	// Origin says who put it there: "default", "config.json
	// sandbox.denyRead", "--sandbox-deny-read", "harness claude
	// install", ...
	Origin string `json:"origin"`
}

// Reads is the read policy of a planned run, as run --dry-run lists it.
type Reads struct {
	// Strict reads only the system directories, Roots and Allow.
	Strict bool        `json:"strict,omitempty"`
	Deny   []ReadEntry `json:"deny"`
	Allow  []ReadEntry `json:"allow"`
	Roots  []ReadEntry `json:"roots,omitempty"`
}

// Origins of the read policy's entries.
const (
	originDefault    = "default"
	originConfigDeny = "config.json sandbox.denyRead"
	originConfigRead = "config.json sandbox.allowRead"
	// OriginDenyReadFlag is the origin of --sandbox-deny-read's paths.
	OriginDenyReadFlag = "--sandbox-deny-read"
)

// readDefaults are the paths below the user's home denied by default:
// the credentials of the user's tools.
var readDefaults = []string{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
	".git-credentials", ".config/git/credentials", ".npmrc", ".pypirc", ".config/gh", ".password-store", ".env"}

// harnessHomes are each harness's own configuration below the user's
// home, denied by default: the run uses its session's copy.
var harnessHomes = map[string][]string{
	persona.HarnessClaude:   {".claude", ".claude.json"},
	persona.HarnessCodex:    {".codex"},
	persona.HarnessOpencode: {".config/opencode", ".local/share/opencode"},
	persona.HarnessGemini:   {".gemini"},
}

// harnessHomeVars are the variables of the user's environment that move
// a harness's own configuration elsewhere: denied too.
var harnessHomeVars = map[string]string{
	"CLAUDE_CONFIG_DIR": persona.HarnessClaude,
	"CODEX_HOME":        persona.HarnessCodex,
	"GEMINI_CLI_HOME":   persona.HarnessGemini,
}

// readAllowDefaults are the files below the user's home that stay
// readable: git's configuration.
var readAllowDefaults = []string{".gitconfig", ".config/git/config"}

// readPolicy returns the read policy of the planned run p, whose harness
// is planned as inv, with sb's additions: the defaults below the home
// directory of the caller's environment ($HOME), the workforce home and
// the real project denied; this session, its git objects, the harness's
// install and git's configuration allowed.
func (p *Plan) readPolicy(sb Sandbox, inv *harness.Invocation) *Reads {
	r := &Reads{Strict: sb.Mode == confine.Strict, Deny: []ReadEntry{}, Allow: []ReadEntry{}}
	deny := func(path, origin string) {
		if filepath.IsAbs(path) {
			r.Deny = append(r.Deny, ReadEntry{Path: filepath.Clean(path), Origin: origin})
		}
	}
	allow := func(path, origin string) {
		if filepath.IsAbs(path) {
			r.Allow = append(r.Allow, ReadEntry{Path: filepath.Clean(path), Origin: origin})
		}
	}
	get := envLookup(p.env)
	if home := get("HOME"); filepath.IsAbs(home) {
		for _, d := range readDefaults {
			deny(filepath.Join(home, d), originDefault)
		}
		for _, h := range persona.Harnesses {
			if h == p.Harness && p.state == nil {
				// The harness runs on the user's own configuration.
				continue
			}
			for _, d := range harnessHomes[h] {
				deny(filepath.Join(home, d), originDefault+": "+h+"'s own configuration (the run uses its session's copy)")
			}
		}
		for _, d := range readAllowDefaults {
			allow(filepath.Join(home, d), originDefault+": git's configuration")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(harnessHomeVars)) {
		h := harnessHomeVars[name]
		if v := get(name); v != "" && !(h == p.Harness && p.state == nil) {
			deny(v, originDefault+": $"+name+", "+h+"'s own configuration")
		}
	}
	if p.home != "" {
		deny(p.home, originDefault+": the workforce home (other sessions, results, history, the worker's credentials and clones)")
	}
	deny(p.Root, originDefault+": the real project (the sandbox is the agent's view)")
	for _, e := range sb.DenyRead {
		deny(e.Path, e.Origin)
	}
	// What your own harness configuration denies (Claude Code's
	// sandbox.filesystem.denyRead, codex's permission profile), read from
	// your configuration, never the project's: whichever harness runs.
	for _, h := range persona.Harnesses {
		up, err := harness.ReadUserPolicy(h, p.env)
		if err != nil {
			if h == p.Harness {
				p.Warnings = append(p.Warnings, fmt.Sprintf("the read policy leaves out what your %s configuration denies: %v", h, err))
			}
			continue
		}
		for _, e := range up.DenyRead {
			deny(e.Value, e.Origin)
		}
		if h == p.Harness {
			for _, n := range up.Notes {
				if !strings.Contains(n, "network") {
					p.Notes = append(p.Notes, n)
				}
			}
		}
	}
	allow(p.Sandbox, "this session")
	if filepath.IsAbs(p.Sandbox) {
		// They name the real project, which the sandbox keeps from
		// the agent (and the manifest the files it hides).
		deny(filepath.Join(p.Sandbox, RecordFile), originDefault+": the session's record, which names the real project")
		deny(filepath.Join(p.Sandbox, mount.ManifestFile), originDefault+": the sandbox's manifest, which names the real project and the hidden files")
	}
	for _, s := range gitObjectStores(p.Root) {
		allow(s, "git objects the sandbox borrows")
	}
	path := inv.Path
	if path == "" {
		path, _ = harness.LookPath(inv.Binary, inv.Env())
	}
	if path != "" {
		denied := func(dir string) bool {
			for _, d := range r.Deny {
				if pathutil.Within(dir, d.Path) {
					return true
				}
			}
			return false
		}
		for _, dir := range installDirs(path, inv.Env()) {
			if m, ok := nodeModules(dir.Path); ok && pathutil.Within(p.Root, m) {
				// Installed in the project: its dependencies are
				// hoisted beside it.
				dir.Path = m
			}
			if denied(dir.Path) {
				// An install directory holding a denied path (a
				// binary at the project's top): only the file.
				dir.Path = dir.File
			}
			allow(dir.Path, "harness "+p.Harness+" "+dir.What)
		}
	}
	for _, e := range sb.AllowRead {
		allow(e.Path, e.Origin)
		// The user's word takes a default denial of the same path out
		// (a path both denied and allowed is denied); a denial the user
		// made stays.
		r.Deny = slices.DeleteFunc(r.Deny, func(d ReadEntry) bool {
			return d.Path == filepath.Clean(e.Path) && strings.HasPrefix(d.Origin, originDefault)
		})
	}
	if r.Strict && p.state != nil {
		for _, kv := range p.state.Env {
			if v, ok := strings.CutPrefix(kv, "GOPROXY="); ok {
				for _, u := range strings.Split(v, ",") {
					if dir, ok := strings.CutPrefix(u, "file://"); ok && filepath.IsAbs(dir) {
						r.Roots = append(r.Roots, ReadEntry{Path: filepath.Clean(dir), Origin: "the user's Go module cache (GOPROXY)"})
					}
				}
			}
		}
	}
	return r
}

// Policy returns the confine.ReadPolicy of r.
func (r *Reads) Policy() *confine.ReadPolicy {
	paths := func(es []ReadEntry) []string {
		out := make([]string, 0, len(es))
		for _, e := range es {
			if !slices.Contains(out, e.Path) {
				out = append(out, e.Path)
			}
		}
		return out
	}
	return &confine.ReadPolicy{Deny: paths(r.Deny), Allow: paths(r.Allow), Strict: r.Strict, Roots: paths(r.Roots)}
}

// gitObjectStores returns the object stores the sandbox's git borrows
// from the real project root: the repository's objects (its common
// directory's, for a linked worktree), its submodules', and the stores
// their alternates name, recursively. Read from the real repository, not
// the sandbox, whose alternates files the agent can write.
func gitObjectStores(root string) []string {
	if root == "" {
		return nil
	}
	common := filepath.Join(root, ".git")
	if fi, err := os.Stat(common); err == nil && !fi.IsDir() {
		data, err := os.ReadFile(common)
		if err != nil {
			return nil
		}
		line, _, _ := strings.Cut(string(data), "\n")
		dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return nil
		}
		dir = strings.TrimSpace(dir)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		common = dir
		if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
			if c := strings.TrimSpace(string(c)); filepath.IsAbs(c) {
				common = c
			} else {
				common = filepath.Join(dir, c)
			}
		}
	}
	stores := []string{filepath.Join(common, "objects")}
	modules, _ := filepath.Glob(filepath.Join(common, "modules", "*", "objects"))
	stores = append(stores, modules...)
	var out []string
	seen := map[string]bool{}
	for len(stores) > 0 && len(out) < 64 {
		s := filepath.Clean(stores[0])
		stores = stores[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		if fi, err := os.Stat(s); err != nil || !fi.IsDir() {
			continue
		}
		out = append(out, s)
		data, err := os.ReadFile(filepath.Join(s, "info", "alternates"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !filepath.IsAbs(line) {
				line = filepath.Join(s, line)
			}
			stores = append(stores, line)
		}
	}
	return out
}

// installDir is a directory a harness needs to read: its install
// directory or its interpreter's.
type installDir struct {
	// Path is the directory, File the program in it.
	Path, File string
	// What says which: "install", "interpreter".
	What string
}

// installDirs returns the install directory of the program at path,
// its symlinks resolved, and its interpreter's when it is a script (a #!
// line; "#!/usr/bin/env node" looks node up on env's PATH).
func installDirs(path string, env []string) []installDir {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	out := []installDir{{Path: packageDir(real), File: real, What: "install"}}
	interp := interpreter(real, env)
	if interp == "" {
		return out
	}
	if r, err := filepath.EvalSymlinks(interp); err == nil {
		out = append(out, installDir{Path: packageDir(r), File: r, What: "interpreter"})
	}
	return out
}

// packageDir returns the install directory of the program file: the
// package directory of an npm package (the outermost node_modules/NAME
// or node_modules/@SCOPE/NAME), else the directory above a bin directory
// (~/.nvm/versions/node/v20/bin/node: ~/.nvm/versions/node/v20), else
// its directory.
func packageDir(file string) string {
	parts := strings.Split(file, string(filepath.Separator))
	for i := 1; i < len(parts)-1; i++ {
		if parts[i] != "node_modules" || i+1 >= len(parts)-1 {
			continue
		}
		end := i + 2
		if strings.HasPrefix(parts[i+1], "@") && i+2 < len(parts)-1 {
			end = i + 3
		}
		return string(filepath.Separator) + filepath.Join(parts[1:end]...)
	}
	dir := filepath.Dir(file)
	if filepath.Base(dir) == "bin" && filepath.Dir(dir) != "/" {
		return filepath.Dir(dir)
	}
	return dir
}

// nodeModules returns the outermost node_modules directory dir is in.
func nodeModules(dir string) (string, bool) {
	parts := strings.Split(dir, string(filepath.Separator))
	for i := 1; i < len(parts); i++ {
		if parts[i] == "node_modules" {
			return string(filepath.Separator) + filepath.Join(parts[1:i+1]...), true
		}
	}
	return "", false
}

// interpreter returns the interpreter a script's #! line names, looked
// up on env's PATH through env(1); "" for none.
func interpreter(file string, env []string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return ""
	}
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return ""
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return ""
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0]
	}
	for _, a := range fields[1:] {
		if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
			continue
		}
		if p, err := harness.LookPath(a, env); err == nil {
			return p
		}
		return ""
	}
	return ""
}
