package mount

import (
	"os"
	"path/filepath"
	"strings"
)

// gitLocationVars are git's variables that name a repository, a work tree
// or an index: set, they would point git in the sandbox at the real
// repository, so SealEnv drops them and git finds the sandbox's own.
var gitLocationVars = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true, "GIT_PREFIX": true,
}

// keptVars name the user's home and the harnesses' configuration, login
// and cache directories: SealEnv keeps them as they are even when they lie
// inside the project (a dotfiles repository at the home directory), since
// they are the user's, not the project's, and a harness without them
// loses its login and settings.
var keptVars = map[string]bool{
	"HOME": true, "TMPDIR": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true,
	"XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true, "CODEX_HOME": true, "CLAUDE_CONFIG_DIR": true,
	"OPENCODE_CONFIG_DIR": true, "AGENT_WORKFORCE_HOME": true,
}

// SealedVar is one variable SealEnv changed: its name, and its new value,
// or Dropped.
type SealedVar struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Dropped bool   `json:"dropped,omitempty"`
}

// SealEnv returns env as the harness of a sandbox sees it: no variable
// names a path of the real project. root is the real project root and tree
// its sandbox copy, both canonical. In each value, every absolute path at
// or below root (each element of a colon-separated list such as PATH, or
// the whole value when it has no colon) is rewritten to the same path below
// tree; a path whose symlinks lead below root counts too. PWD is left out
// without a report (the harness package sets it to the directory the
// harness starts in); OLDPWD is dropped, and so are git's location
// variables (GIT_DIR, GIT_WORK_TREE, ...), so that git in the sandbox uses
// the sandbox's repository. The user's home and the harnesses'
// configuration directories (keptVars: HOME, XDG_CONFIG_HOME, CODEX_HOME,
// ...) are kept as they are. The second result lists what changed, in
// env's order.
func SealEnv(env []string, root, tree string) ([]string, []SealedVar) {
	out := make([]string, 0, len(env))
	var changed []SealedVar
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if k == "PWD" {
			continue // the harness package sets it to the harness's directory
		}
		if k == "OLDPWD" || gitLocationVars[k] {
			changed = append(changed, SealedVar{Name: k, Dropped: true})
			continue
		}
		if keptVars[k] {
			out = append(out, kv)
			continue
		}
		if nv := sealValue(v, root, tree); nv != v {
			changed = append(changed, SealedVar{Name: k, Value: nv})
			kv = k + "=" + nv
		}
		out = append(out, kv)
	}
	return out, changed
}

// sealValue rewrites the absolute paths below root in v, an element of a
// colon-separated list (a value without a colon is a list of one).
func sealValue(v, root, tree string) string {
	if !strings.Contains(v, "/") {
		return v
	}
	parts := strings.Split(v, ":")
	changed := false
	for i, p := range parts {
		if np, ok := sealPath(p, root, tree); ok {
			parts[i], changed = np, true
		}
	}
	if !changed {
		return v
	}
	return strings.Join(parts, ":")
}

// sealPath maps p, when it is an absolute path at or below root (textually,
// or once its symlinks are resolved), to the same place below tree.
func sealPath(p, root, tree string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	clean := filepath.Clean(p)
	if rel, ok := within(root, clean); ok {
		return filepath.Join(tree, rel), true
	}
	// A path reaching the root through a symlink (the shell's logical
	// directory, say): resolve the longest existing prefix.
	if _, err := os.Lstat(clean); err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(clean)
	if err != nil || real == clean {
		return "", false
	}
	if rel, ok := within(root, real); ok {
		return filepath.Join(tree, rel), true
	}
	return "", false
}

// within returns path relative to dir when path is dir or below it, by
// whole path segments.
func within(dir, path string) (string, bool) {
	if path == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if strings.HasPrefix(path, prefix) {
		return path[len(prefix):], true
	}
	return "", false
}
