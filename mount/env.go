package mount

import (
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// gitLocationVars are git's variables that name a repository, a work tree
// or an index: set, they would point git in the sandbox at the real
// repository, so SealEnv drops them and git finds the sandbox's own.
var gitLocationVars = map[string]bool{
	"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_COMMON_DIR": true,
	"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
	"GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true, "GIT_PREFIX": true,
}

// SealedVar is one variable SealEnv changed: its name, and its new value,
// or Dropped.
type SealedVar struct {
	Name    string `json:"name"`
	Value   string `json:"value,omitempty"`
	Dropped bool   `json:"dropped,omitempty"`
}

// SealEnv returns env as the harness of a sandbox sees it:
// NewSealer(root, tree, env).Env(env).
func SealEnv(env []string, root, tree string) ([]string, []SealedVar) {
	return NewSealer(root, tree, env).Env(env)
}

// Sealer rewrites text so that it names no path of the real project: the
// environment, the arguments and the configuration files of a harness.
type Sealer struct {
	root, tree string
	// aliases are other names of root: the shell's logical directory
	// when it goes through a symlink.
	aliases []string
}

// NewSealer returns a Sealer for the project root and its sandbox copy
// tree, both canonical; env's PWD, when it names a directory of the
// project by another path (through a symlink), gives root's alias.
func NewSealer(root, tree string, env []string) *Sealer {
	s := &Sealer{root: root, tree: tree}
	for _, kv := range env {
		pwd, ok := strings.CutPrefix(kv, "PWD=")
		if !ok || !filepath.IsAbs(pwd) {
			continue
		}
		pwd = filepath.Clean(pwd)
		real, err := resolvePrefix(pwd)
		if err != nil {
			continue
		}
		rel, in := pathutil.Rel(root, real)
		if !in {
			continue
		}
		alias := pwd
		if rel != "." {
			trimmed, ok := strings.CutSuffix(pwd, string(filepath.Separator)+rel)
			if !ok {
				continue
			}
			alias = trimmed
		}
		if alias != root && alias != "" {
			s.aliases = append(s.aliases, alias)
		}
	}
	return s
}

// Env returns env with no variable naming a path of the real project. In
// each value, every absolute path at or below root is rewritten to the
// same path below tree: each element of a colon-separated list such as
// PATH, or the whole value when it has no colon, also when it reaches the
// project through a symlink or does not exist yet; and, anywhere in the
// value, root and its aliases where they start a path (--flag=ROOT/x,
// a;ROOT, JSON). PWD is left out without a report (the harness package
// sets it to the directory the harness starts in); OLDPWD is dropped, and
// so are git's location variables (GIT_DIR, GIT_WORK_TREE, ...), so that
// git in the sandbox uses the sandbox's repository. The second result
// lists what changed, in env's order.
func (s *Sealer) Env(env []string) ([]string, []SealedVar) {
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
		if nv := s.Text(v); nv != v {
			changed = append(changed, SealedVar{Name: k, Value: nv})
			kv = k + "=" + nv
		}
		out = append(out, kv)
	}
	return out, changed
}

// Text returns v with its paths of the real project rewritten to the
// sandbox, as Env does for a value.
func (s *Sealer) Text(v string) string {
	if !strings.Contains(v, "/") {
		return v
	}
	parts := strings.Split(v, ":")
	changed := false
	for i, p := range parts {
		if strings.HasPrefix(p, "//") {
			continue // a URL's path ("file:///..."), left to the text rule
		}
		if np, ok := sealPath(p, s.root, s.tree); ok {
			parts[i], changed = np, true
		}
	}
	if changed {
		v = strings.Join(parts, ":")
	}
	for _, r := range append([]string{s.root}, s.aliases...) {
		v = replacePathPrefix(v, r, s.tree)
	}
	return v
}

// replacePathPrefix replaces, in v, each occurrence of the path root that
// starts a path (not preceded by a path character, slashes aside: a URL's
// "file://" counts) and ends at a path boundary (the end, "/", or a character that
// is not a path character), with tree; occurrences that are already tree
// are left.
func replacePathPrefix(v, root, tree string) string {
	if root == "/" || !strings.Contains(v, root) {
		return v
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(v[i:], root)
		if j < 0 {
			b.WriteString(v[i:])
			return b.String()
		}
		j += i
		end := j + len(root)
		// The path starts here, after any run of slashes ("file:///r").
		k := j
		for k > 0 && v[k-1] == '/' {
			k--
		}
		startOK := k == 0 || !pathChar(v[k-1])
		endOK := end == len(v) || v[end] == '/' || !pathChar(v[end])
		isTree := strings.HasPrefix(v[j:], tree) && (j+len(tree) == len(v) || v[j+len(tree)] == '/' || !pathChar(v[j+len(tree)]))
		b.WriteString(v[i:j])
		switch {
		case isTree:
			b.WriteString(tree)
			i = j + len(tree)
		case startOK && endOK:
			b.WriteString(tree)
			i = end
		default:
			b.WriteString(root)
			i = end
		}
	}
}

// pathChar reports whether c can be part of a path segment's name.
func pathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c >= 0x80
}

// sealPath maps p, when it is an absolute path at or below root (textually,
// or once its symlinks are resolved), to the same place below tree.
func sealPath(p, root, tree string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	clean := filepath.Clean(p)
	if rel, ok := pathutil.Rel(root, clean); ok {
		return filepath.Join(tree, rel), true
	}
	// A path reaching the root through a symlink (the shell's logical
	// directory, say), existing or not yet: resolve the longest existing
	// prefix.
	real, err := resolvePrefix(clean)
	if err != nil || real == clean {
		return "", false
	}
	if rel, ok := pathutil.Rel(root, real); ok {
		return filepath.Join(tree, rel), true
	}
	return "", false
}
