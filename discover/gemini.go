package discover

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tailscale/hujson"
)

// Gemini CLI's settings that change what it loads, and where (measured on
// 0.61.0 with make e2e, e2e/gemini_test.go; the rules below are its own,
// read in its bundled source and checked against the real binary):
//
//   - Its home: $GEMINI_CLI_HOME when set, else the user's home; every
//     file of its own is in <home>/.gemini (settings.json, GEMINI.md,
//     trustedFolders.json, skills, sessions).
//   - Settings files, merged in this order, later winning: the system
//     defaults (system-defaults.json beside the system settings,
//     $GEMINI_CLI_SYSTEM_DEFAULTS_PATH), the user's
//     (<home>/.gemini/settings.json), the project's
//     (<dir>/.gemini/settings.json, only when the directory is trusted),
//     the system settings ($GEMINI_CLI_SYSTEM_SETTINGS_PATH, else
//     /etc/gemini-cli/settings.json). A system file is read only when it
//     and every directory above it are owned by root and writable by no
//     one else. Settings files are JSON with comments; a list or a string
//     replaces the one of an earlier file.
//   - context.fileName (a string or a list) names the instruction files;
//     GEMINI.md always stays, after them. context.memoryBoundaryMarkers
//     (default [".git"]) are the root markers; an empty list keeps the
//     walk in the working directory.
//   - Trust of a directory: GEMINI_CLI_TRUST_WORKSPACE=true trusts it
//     (false, or GEMINI_RESTRICTED_MODE=true, distrusts it); with
//     security.folderTrust.enabled false every directory is trusted;
//     otherwise the rule of trustedFolders.json
//     ($GEMINI_CLI_TRUSTED_FOLDERS_PATH, else <home>/.gemini/) with the
//     longest path containing the directory decides (TRUST_FOLDER,
//     TRUST_PARENT: the rule's parent, DO_NOT_TRUST); no rule leaves it
//     undecided, which a headless run refuses (exit 55).

// Gemini is the harness name of Gemini CLI's profile.
const geminiHarness = "gemini"

// GeminiConfig is what of gemini's settings changes its discovery in a
// directory.
type GeminiConfig struct {
	// Home is gemini's home: $GEMINI_CLI_HOME, else the user's home.
	Home string `json:"home"`
	// FileNames are the instruction file names, as gemini takes them:
	// context.fileName's, then GEMINI.md.
	FileNames []string `json:"fileNames"`
	// Markers are context.memoryBoundaryMarkers; nil when no settings
	// file sets them (the profile's default).
	Markers []string `json:"markers,omitempty"`
	// Trusted is the directory's trust, nil when nothing decides it.
	Trusted *bool `json:"trusted,omitempty"`
	// TrustSource says what decided it: "env", "settings" (folder trust
	// off) or the trusted folders file.
	TrustSource string `json:"trustSource,omitempty"`
	// Settings are the settings files read, in merge order; Problems the
	// ones that could not be.
	Settings []string `json:"settings"`
	Problems []string `json:"problems,omitempty"`
}

// GeminiHome returns gemini's home in the environment getenv:
// $GEMINI_CLI_HOME, else $HOME; "" when neither is an absolute path.
func GeminiHome(getenv func(string) string) string {
	for _, v := range []string{"GEMINI_CLI_HOME", "HOME"} {
		if h := getenv(v); h != "" {
			if filepath.IsAbs(h) {
				return filepath.Clean(h)
			}
			return ""
		}
	}
	return ""
}

// GeminiSystemSettings returns the paths of gemini's system settings and
// system defaults in the environment getenv.
func GeminiSystemSettings(getenv func(string) string) (settings, defaults string) {
	settings = getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
	if settings == "" {
		settings = "/etc/gemini-cli/settings.json"
	}
	defaults = getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
	if defaults == "" {
		defaults = filepath.Join(filepath.Dir(settings), "system-defaults.json")
	}
	return settings, defaults
}

// ReadGeminiSettings reads a gemini settings file (JSON with comments)
// as a JSON object; a missing file is nil, no error.
func ReadGeminiSettings(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not JSON: %v", path, err)
	}
	var m map[string]any
	if err := json.Unmarshal(std, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s: not a JSON object", path)
	}
	return m, nil
}

// rootOwned reports whether path and every directory above it are owned
// by root and writable by no one else: gemini reads a system settings
// file only then.
func rootOwned(path string) bool {
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// settingAt returns the value at the dotted path keys of settings.
func settingAt(settings map[string]any, keys ...string) (any, bool) {
	var v any = settings
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// LoadGeminiConfig reads gemini's settings as they apply in dir, in the
// environment getenv.
func LoadGeminiConfig(getenv func(string) string, dir string) GeminiConfig {
	c := GeminiConfig{Home: GeminiHome(getenv), Settings: []string{}}
	sysPath, defPath := GeminiSystemSettings(getenv)
	read := func(path string, system bool) map[string]any {
		if system && !rootOwned(path) {
			return nil
		}
		m, err := ReadGeminiSettings(path)
		if err != nil {
			c.Problems = append(c.Problems, err.Error())
			return nil
		}
		if m != nil {
			c.Settings = append(c.Settings, path)
		}
		return m
	}
	sysDefaults := read(defPath, true)
	var user map[string]any
	if c.Home != "" {
		user = read(filepath.Join(c.Home, ".gemini", "settings.json"), false)
	}
	system := read(sysPath, true)
	// Trust is decided without the project's settings.
	trustLayers := []map[string]any{sysDefaults, user, system}
	folderTrust := true
	for _, l := range trustLayers {
		if v, ok := settingAt(l, "security", "folderTrust", "enabled"); ok {
			if b, ok := v.(bool); ok {
				folderTrust = b
			}
		}
	}
	c.Trusted, c.TrustSource = geminiTrust(getenv, c.Home, dir, folderTrust, &c.Problems)
	layers := []map[string]any{sysDefaults, user}
	if dir != "" && c.Trusted != nil && *c.Trusted && !sameDir(dir, c.Home) {
		layers = append(layers, read(filepath.Join(dir, ".gemini", "settings.json"), false))
	}
	layers = append(layers, system)
	var names any
	for _, l := range layers {
		if v, ok := settingAt(l, "context", "fileName"); ok {
			names = v
		}
		if v, ok := settingAt(l, "context", "memoryBoundaryMarkers"); ok {
			if list, ok := v.([]any); ok {
				c.Markers = []string{}
				for _, x := range list {
					if s, ok := x.(string); ok && !filepath.IsAbs(s) && !strings.Contains(s, "..") {
						c.Markers = append(c.Markers, s)
					}
				}
			}
		}
	}
	c.FileNames = geminiFileNames(names)
	return c
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// geminiFileNames returns the instruction file names of a
// context.fileName value (a string, a list, or nil): each name trimmed
// and cleaned, the empty ones dropped, then GEMINI.md, each once.
func geminiFileNames(v any) []string {
	var raw []string
	switch x := v.(type) {
	case string:
		raw = []string{x}
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok {
				raw = append(raw, s)
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range append(raw, "GEMINI.md") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		n = filepath.Clean(n)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// GeminiTrustedFolders returns the path of gemini's trusted folders file
// for the gemini home home in the environment getenv.
func GeminiTrustedFolders(getenv func(string) string, home string) string {
	if p := getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		return p
	}
	return filepath.Join(home, ".gemini", "trustedFolders.json")
}

// geminiTrust decides the trust of dir as gemini does (see above).
func geminiTrust(getenv func(string) string, home, dir string, folderTrust bool, problems *[]string) (*bool, string) {
	yes, no := true, false
	switch {
	case getenv("GEMINI_RESTRICTED_MODE") == "true" || getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		return &no, "env"
	case getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true":
		return &yes, "env"
	case !folderTrust:
		return &yes, "settings"
	}
	path := GeminiTrustedFolders(getenv, home)
	if dir == "" || !filepath.IsAbs(path) {
		return nil, ""
	}
	rules, err := ReadGeminiSettings(path)
	if err != nil {
		*problems = append(*problems, err.Error())
		return nil, ""
	}
	loc := robustReal(dir)
	best, level := -1, ""
	for rule, v := range rules {
		lv, _ := v.(string)
		eff := rule
		if lv == "TRUST_PARENT" {
			eff = filepath.Dir(rule)
		}
		if !within(robustReal(eff), loc) {
			continue
		}
		if len(rule) > best {
			best, level = len(rule), lv
		}
	}
	switch level {
	case "DO_NOT_TRUST":
		return &no, path
	case "TRUST_FOLDER", "TRUST_PARENT":
		return &yes, path
	}
	return nil, ""
}

// within reports whether child is parent or below it.
func within(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// robustReal is p, absolute, with its symlinks resolved as far as it
// exists: the real path of its longest existing ancestor, then the rest.
func robustReal(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return robustRealFS(OS, abs)
}

func robustRealFS(fsys FS, p string) string {
	if r, err := fsys.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(robustRealFS(fsys, parent), filepath.Base(p))
}

// geminiImportDepth is how deep gemini follows imports.
const geminiImportDepth = 5

// geminiImports inlines the @path imports of a gemini instruction file's
// content, as Gemini CLI 0.61.0 does in its default ("tree") format:
// @ at the start or after white space, followed by a path starting with
// ".", "/" or a letter, up to the next white space, outside backtick
// code spans; the path is taken relative to base (the importing file's
// directory), URL-decoded, and must lead, symlinks resolved, into the
// project root of base (found by markers, else base itself). An import
// becomes "<!-- Imported from: P -->\n<content>\n<!-- End of import from:
// P -->", imported files are processed in turn (five levels deep at
// most), a file already on the import path becomes "<!-- File already
// processed: P -->", one out of the project "<!-- Import failed: P - Path
// traversal attempt -->", one that cannot be read "<!-- Import failed: P
// - ERROR -->".
func geminiImports(fsys FS, content, base string, markers []string) string {
	return geminiImport(fsys, content, base, geminiRoot(fsys, base, markers), map[string]bool{}, 0)
}

// geminiRoot is the project root an import of a file in base must stay
// in: the nearest directory with a marker, else base.
func geminiRoot(fsys FS, base string, markers []string) string {
	for dir := base; ; dir = filepath.Dir(dir) {
		for _, m := range markers {
			if filepath.IsAbs(m) || strings.Contains(m, "..") {
				continue
			}
			if _, err := fsys.Stat(filepath.Join(dir, m)); err == nil {
				return dir
			}
		}
		if dir == filepath.Dir(dir) {
			return base
		}
	}
}

func geminiImport(fsys FS, content, base, root string, processed map[string]bool, depth int) string {
	if depth >= geminiImportDepth {
		return content
	}
	code := codeSpans(content)
	var b strings.Builder
	last := 0
	for _, im := range findImports(content) {
		b.WriteString(content[last:im.start])
		last = im.end
		if inSpans(code, im.start) {
			b.WriteString("@" + im.path)
			continue
		}
		full := resolvePath(base, im.path)
		// The check decodes the path (%20), the read does not.
		check := full
		if u, err := url.PathUnescape(full); err == nil {
			check = u
		}
		if strings.HasPrefix(im.path, "file://") || strings.HasPrefix(im.path, "http://") || strings.HasPrefix(im.path, "https://") ||
			!within(robustRealFS(fsys, root), robustRealFS(fsys, check)) {
			b.WriteString("<!-- Import failed: " + im.path + " - Path traversal attempt -->")
			continue
		}
		if processed[full] {
			b.WriteString("<!-- File already processed: " + im.path + " -->")
			continue
		}
		data, err := readImport(fsys, full)
		if err != nil {
			b.WriteString("<!-- Import failed: " + im.path + " - " + err.Error() + " -->")
			continue
		}
		next := make(map[string]bool, len(processed)+1)
		for k := range processed {
			next[k] = true
		}
		next[full] = true
		inner := geminiImport(fsys, strings.ToValidUTF8(string(data), "\uFFFD"), filepath.Dir(full), root, next, depth+1)
		b.WriteString("<!-- Imported from: " + im.path + " -->\n" + inner + "\n<!-- End of import from: " + im.path + " -->")
	}
	b.WriteString(content[last:])
	return b.String()
}

// resolvePath is node's path.resolve(base, p).
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readImport reads an imported file, failing with node's messages for
// the common cases.
func readImport(fsys FS, path string) ([]byte, error) {
	fi, err := fsys.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ENOENT: no such file or directory, access '%s'", path)
	}
	if fi.IsDir() {
		return nil, errors.New("EISDIR: illegal operation on a directory, read")
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, _, err := fsys.ReadFile(path, -1)
	return data, err
}

// anImport is one @path of a file's content: its bytes [start, end).
type anImport struct {
	start, end int
	path       string
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// findImports finds the @path imports of content, as gemini's scanner
// does (it skips the character after each import).
func findImports(content string) []anImport {
	var out []anImport
	for i := 0; i < len(content); {
		at := strings.IndexByte(content[i:], '@')
		if at < 0 {
			break
		}
		i += at
		if i > 0 && !isSpace(content[i-1]) {
			i++
			continue
		}
		j := i + 1
		for j < len(content) && !isSpace(content[j]) {
			j++
		}
		p := content[i+1 : j]
		if p != "" && (p[0] == '.' || p[0] == '/' || p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z') {
			out = append(out, anImport{start: i, end: j, path: p})
		}
		i = j + 1
	}
	return out
}

// codeSpans returns the spans the regular expression /(`+)([\s\S]*?)\1/g
// matches in content, as [start, end) pairs: a run of backticks up to the
// next run of the same length (backtracking to a shorter opening run when
// no closing one is found).
func codeSpans(content string) [][2]int {
	var out [][2]int
	for i := 0; i < len(content); {
		if content[i] != '`' {
			i++
			continue
		}
		run := 0
		for i+run < len(content) && content[i+run] == '`' {
			run++
		}
		matched := false
		for k := run; k >= 1; k-- {
			fence := strings.Repeat("`", k)
			if j := strings.Index(content[i+k:], fence); j >= 0 {
				end := i + k + j + k
				out = append(out, [2]int{i, end})
				i, matched = end, true
				break
			}
		}
		if !matched {
			i++
		}
	}
	return out
}

func inSpans(spans [][2]int, at int) bool {
	for _, s := range spans {
		if at >= s[0] && at < s[1] {
			return true
		}
	}
	return false
}
