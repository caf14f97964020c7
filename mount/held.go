package mount

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// What the agent writes that never syncs back silently. Two kinds of
// file are kept out of the real tree, whatever the agent did to them
// (created, changed, deleted, replaced), by Sync and by Live alike:
//
//   - Policy files (PolicyFiles): the files that decide what the next
//     sandbox leaves out and protects, and the project layer, where
//     project personas (their env, their sidecars, their skills) come
//     from. They are refused: never synced back, not by sessions apply
//     either; Report.Refused lists the agent's changes to them, and the
//     agent's versions stay in the session, where the user can look.
//   - Executable configuration (HeldConfig): files a harness, an editor
//     or a tool reads at its next plain start in the project and that
//     make it run commands (hooks, MCP servers, plugins, tasks, shell
//     environments, git hooks). They are held for review: Report.Held
//     lists them and they stay in the session, while the rest syncs
//     back; SyncOptions.SyncConfig lets them cross with the rest
//     (sessions apply, run --sync-config).
//
// Both tables are data: a row is a path pattern and the reason it is
// there. A pattern is slash-separated names, each a path.Match pattern
// in lower case; it matches a run of consecutive names of a path, at any
// depth, so that it holds the file or directory it names and everything
// below it (a harness started in a sub-directory reads the
// configuration there; a project can be a sub-directory of another).
// Names are compared as a case-insensitive file system would find them
// (foldName: lower case, trailing dots and spaces dropped and an NTFS
// stream cut off as NTFS does, the code points HFS+ ignores dropped, a
// backslash a separator), so that .Claude/Settings.json,
// .claude::$INDEX_ALLOCATION/settings.json and .c\u200claude/settings.json
// are held where they would replace .claude/settings.json; and an 8.3
// short name (CLAUDE~1, MCP~1.JSO, AGENTI~1) matches every pattern whose
// name, without its dots, it could be the short name of (shortMatch).
// Matching at any depth, in any case and by short names keeps some
// harmless files too (a .vscode/settings.json of a sub-project, a
// CLAUDE~2 that stood for another long name); they wait for an apply.
//
// Besides the tables, each sandbox keeps back what they are through
// links of the real tree (keepLinked: .claude a link to tools/claude
// holds tools/claude/), and holds the real repository's git hooks
// directory where it is inside the tree (core.hooksPath tools/hooks, or
// where the links in .git/hooks lead).
//
// The cut: these tables name files of harnesses and tools, which the
// package otherwise leaves to its callers; they are here because every
// way the tree syncs back (Sync, Live) must apply them, including the
// sync of a session a crash left, which has only its directory.

// PathRule is a row of PolicyFiles or HeldConfig: a path pattern and why
// it is there.
type PathRule struct {
	// Pattern is the path pattern (see above); a trailing slash says the
	// path is a directory, for the reader: it matches as any other.
	Pattern string
	// Reason says what reads the file, and what an agent's version of it
	// could make happen.
	Reason string
}

// PolicyFiles are the policy files, never synced back (Report.Refused).
var PolicyFiles = []PathRule{
	{".agentignore", "what the next sandbox leaves out: an agent that empties it exposes what it hid"},
	{".agentreadonly", "what the next sandbox copies read-only: an agent that empties it may write what it protects"},
	{".*.agentignore", "a persona's own .agentignore, as .agentignore"},
	{".agentworkforce/", "the project layer: project personas, which the next run of their id loads, with their env, sidecars and skills"},
}

// HeldConfig is the executable configuration held for review
// (Report.Held). What is left out, and why (docs/run.md): .gitattributes
// and .gitmodules (a filter, a diff driver or a submodule's update
// command runs only when the user's own git configuration names it),
// .editorconfig (no commands), build files and scripts (Makefile,
// package.json, build.rs: the project's code, which the user runs on
// purpose and reviews as the rest of the work).
var HeldConfig = []PathRule{
	{".claude/", "claude's project configuration: hooks, statusLine and apiKeyHelper commands, the scripts they run, commands with shell lines, agents and skills"},
	{".claude.json", "claude's own state, where the project is a dotfiles repository a home directory links to: MCP servers per project"},
	{".mcp.json", "claude's project MCP servers: commands it starts"},
	{".gemini/", "gemini's project settings: MCP servers, hooks, commands with shell lines, extensions"},
	{".codex/", "codex's project configuration: MCP servers and the notify command"},
	{"opencode.json", "opencode's project configuration: plugins, MCP servers, agents and their permissions"},
	{"opencode.jsonc", "as opencode.json"},
	{".opencode/", "opencode's project directory: plugins (code opencode loads), agents, commands, tools"},
	{".config/opencode/", "opencode's configuration, where the project is a dotfiles repository a home directory links to"},
	{".config/git/", "git's own configuration, where the project is a dotfiles repository a home directory links to: hooks path, aliases, fsmonitor, pager"},
	{".gitconfig", "git's own configuration, where the project is a dotfiles repository a home directory links to"},
	{".vscode/tasks.json", "VS Code tasks: one can run when the folder opens"},
	{".vscode/settings.json", "VS Code settings: paths of the programs extensions start (interpreters, linters, language servers)"},
	{".vscode/launch.json", "VS Code launch configurations: the programs and pre-launch tasks debugging starts"},
	{"*.code-workspace", "a VS Code workspace: settings, tasks and launch configurations, as .vscode/"},
	{".vscode/mcp.json", "VS Code's MCP servers: commands it starts"},
	{".cursor/", "Cursor's project configuration: MCP servers (mcp.json), hooks (hooks.json) and a background agent's install commands (environment.json) it runs, and its rules"},
	{".zed/tasks.json", "Zed tasks: shell commands"},
	{".zed/settings.json", "Zed's project settings: the language servers and context servers it starts, and their commands"},
	{".helix/languages.toml", "Helix's project languages: the language servers and formatters it starts"},
	{".devcontainer/", "dev containers: devcontainer.json's initializeCommand runs on the host when the container is made, with the scripts and Dockerfiles beside it"},
	{".devcontainer.json", "as .devcontainer/"},
	{".envrc", "direnv: a shell script run when a shell enters the directory"},
	{"mise.toml", "mise: environment scripts and hooks run when a shell enters the directory, once the file is trusted"},
	{".mise.toml", "as mise.toml"},
	{"mise.*.toml", "as mise.toml: mise.local.toml, and mise.<env>.toml for MISE_ENV"},
	{".mise.*.toml", "as mise.*.toml"},
	{".mise/", "as mise.toml: .mise/config.toml, its conf.d and tasks"},
	{".config/mise.toml", "as mise.toml"},
	{".config/mise/", "as mise.toml: config.toml and conf.d"},
	{"bunfig.toml", "bun's configuration: preload scripts every bun run and bun test loads"},
	{".husky/", "husky: git hooks run at the user's next commit"},
	{".githooks/", "the directory projects point core.hooksPath at: git hooks"},
	{".pre-commit-config.yaml", "pre-commit: commands its git hook runs at the next commit"},
	{"lefthook.*", "lefthook: commands its git hooks run"},
	{".lefthook.*", "as lefthook.*"},
	{"lefthook-local.*", "as lefthook.*"},
	{".lefthook-local.*", "as lefthook.*"},
	{".lefthook/", "lefthook's scripts, which its git hooks run"},
	{".npmrc", "npm's project configuration: node-options and script-shell run with every npm command"},
	{".yarnrc", "yarn 1's configuration: yarn-path, the program every yarn command runs"},
	{".yarnrc.yml", "yarn's configuration: yarnPath, the program every yarn command runs, and plugins"},
	{".pnpmfile.cjs", "pnpm's hooks, run at every install"},
	{".cargo/config.toml", "cargo's configuration: rustc-wrapper, runners and aliases"},
	{".cargo/config", "as .cargo/config.toml"},
}

// IsPolicyFile reports whether rel (relative to the project root, with
// slashes) is a policy file or lies below one (PolicyFiles).
func IsPolicyFile(rel string) bool { return matchRules(PolicyFiles, rel) }

// IsHeldConfig reports whether rel (relative to the project root, with
// slashes) is executable configuration or lies below it (HeldConfig).
func IsHeldConfig(rel string) bool { return matchRules(HeldConfig, rel) }

// matchRules reports whether a rule of rules matches rel.
func matchRules(rules []PathRule, rel string) bool {
	if rel == "" {
		return false
	}
	names := foldPath(rel)
	for _, r := range rules {
		if matchRun(strings.Split(strings.TrimSuffix(r.Pattern, "/"), "/"), names) {
			return true
		}
	}
	return false
}

// foldPath splits rel into its names, folded (foldName). A backslash
// separates names too, as it does on Windows.
func foldPath(rel string) []string {
	names := strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == '\\' })
	for i, n := range names {
		names[i] = foldName(n)
	}
	return names
}

// matchRun reports whether the patterns pats match a run of consecutive
// names.
func matchRun(pats, names []string) bool {
	for i := 0; i+len(pats) <= len(names); i++ {
		if matchAt(pats, names[i:]) {
			return true
		}
	}
	return false
}

// matchAt reports whether the patterns pats match the first names.
func matchAt(pats, names []string) bool {
	if len(pats) > len(names) {
		return false
	}
	for j, p := range pats {
		if !matchName(p, names[j]) {
			return false
		}
	}
	return true
}

// matchName reports whether the pattern p matches the folded name n, or
// could, where n is an 8.3 short name (shortMatch).
func matchName(p, n string) bool {
	if ok, err := path.Match(p, n); err == nil && ok {
		return true
	}
	return shortMatch(p, n)
}

// foldName is the name a case-insensitive file system finds for name:
// without an NTFS stream (".agentignore::$DATA", ".claude:x"), without
// the code points HFS+ and casefolding file systems ignore
// (pathutil.Ignorable: ".c\u200claude"), in lower case by Unicode's
// simple mappings (upper case first, so that the dotless ı folds as I
// does), without trailing dots and spaces (NTFS drops them).
func foldName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	name = strings.Map(func(r rune) rune {
		if pathutil.Ignorable(r) {
			return -1
		}
		return unicode.ToLower(unicode.ToUpper(r))
	}, name)
	return strings.TrimRight(name, ". ")
}

// shortMatch reports whether the folded name n is an 8.3 short name
// (NTFS, vfat: "agenti~1", "mcp~1.jso", and the hashed "ag1a2b~1") that a
// file system may give a long name the pattern p matches: the short
// name's base (up to 6 characters) starts the pattern's name without its
// dots (Windows drops them, the leading ones too: ".mcp.json" is
// MCP~1.JSO), and its extension (up to 3) starts the pattern's last
// extension. It errs on matching: "claude~2" matches .claude whatever
// long name it stands for, and a hashed short name matches every pattern
// starting with its first two characters.
func shortMatch(p, n string) bool {
	tilde := strings.IndexByte(n, '~')
	if tilde < 1 || tilde > 6 {
		return false
	}
	base, rest := n[:tilde], n[tilde+1:]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || tilde+1+digits > 8 {
		return false
	}
	ext, hasExt := "", false
	switch rest = rest[digits:]; {
	case rest == "":
	case rest[0] == '.' && len(rest) >= 2 && len(rest) <= 4 && !strings.ContainsAny(rest[1:], ".~"):
		ext, hasExt = rest[1:], true
	default:
		return false
	}
	q := strings.TrimLeft(p, ".")
	pbase, pext, dotted := q, "", false
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		pbase, pext, dotted = q[:i], q[i+1:], true
	}
	pbase = strings.ReplaceAll(pbase, ".", "")
	switch {
	case hasExt && !dotted && !strings.ContainsAny(pbase, "*?["):
		return false // a long name with an extension, a pattern without
	case hasExt && dotted && !startsMatch(pext, ext):
		return false
	case !hasExt && dotted && !strings.ContainsAny(pext, "*?["):
		return false // a long name without an extension, a pattern with
	}
	if startsMatch(pbase, base) {
		return true
	}
	// Windows' hashed form: two characters, four hex digits.
	return len(base) == 6 && isHex(base[2:]) && startsMatch(pbase, base[:2])
}

// startsMatch reports whether some name that the pattern p matches
// starts with s. A character class matches any character, erring on
// matching.
func startsMatch(p, s string) bool {
	for s != "" {
		if p == "" {
			return false
		}
		switch p[0] {
		case '*':
			return true
		case '?', '[':
			if p[0] == '[' {
				end := strings.IndexByte(p[1:], ']')
				if end < 0 {
					return false
				}
				p = p[end+2:]
			} else {
				p = p[1:]
			}
			_, size := utf8.DecodeRuneInString(s)
			s = s[size:]
			continue
		case '\\':
			if len(p) < 2 {
				return false
			}
			p = p[1:]
		}
		if p[0] != s[0] {
			return false
		}
		p, s = p[1:], s[1:]
	}
	return true
}

// isHex reports whether s is hexadecimal digits, in lower case (folded).
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// keptBack reports whether the agent's change to rel (a write or a
// removal) stays in the sandbox, as a policy file's (Report.Refused) or,
// without o.SyncConfig, executable configuration's (Report.Held), and
// records it in r when it does.
func (s *Sandbox) keptBack(rel string, o SyncOptions, r *Report) bool {
	switch {
	case s.isPolicy(rel):
		r.Refused = append(r.Refused, rel)
	case !o.SyncConfig && s.isHeld(rel):
		r.Held = append(r.Held, rel)
	default:
		return false
	}
	return true
}

// isPolicy reports whether rel is a policy file of the sandbox: by the
// table (IsPolicyFile), or where a link of one leads (policyPaths).
func (s *Sandbox) isPolicy(rel string) bool {
	return IsPolicyFile(rel) || matchPaths(s.policyPaths, rel)
}

// isHeld reports whether rel is executable configuration of the sandbox:
// by the table (IsHeldConfig), or the git hooks directory, or where a
// link of either leads (heldPaths).
func (s *Sandbox) isHeld(rel string) bool {
	return IsHeldConfig(rel) || matchPaths(s.heldPaths, rel)
}

// matchPaths reports whether rel is one of paths (relative to the root,
// with slashes; "." the whole tree) or lies below one, comparing names
// folded as matchRules does.
func matchPaths(paths []string, rel string) bool {
	if rel == "" || len(paths) == 0 {
		return false
	}
	names := foldPath(rel)
	for _, p := range paths {
		if p == "." {
			return true
		}
		pats := foldPath(p)
		for i, n := range pats {
			pats[i] = escapeMeta(n)
		}
		if len(pats) > 0 && matchAt(pats, names) {
			return true
		}
	}
	return false
}

// escapeMeta makes the name n a path.Match pattern matching n alone.
func escapeMeta(n string) string {
	if !strings.ContainsAny(n, `*?[\`) {
		return n
	}
	var b strings.Builder
	for _, c := range []byte(n) {
		if strings.IndexByte(`*?[\`, c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// keepLinked finds, in the real tree, what the policy files and the
// executable configuration are through links, and adds it to the
// sandbox's own (policyPaths, heldPaths), so that it is kept back as
// they are: with .claude a link to tools/claude, the agent's
// tools/claude/settings.json is what claude reads as .claude/settings.json.
//
// hooks are the real repository's git hooks directories (absolute): each
// is held where it is inside the tree, and so is where each link in it
// leads (a .git/hooks/pre-push that is a link to scripts/pre-push).
// links are the real tree's links (relative to the root, with slashes):
// each that is a policy file, executable configuration or below one
// (by the tables or what this adds) has every path its chain of links
// passes through inside the tree added, each hop's as its link names it
// and the end's as the file system resolves it, with what is below
// them; again until nothing is added. A link that leads out of the tree
// adds nothing: only the tree syncs back.
func (s *Sandbox) keepLinked(hooks []string, links []string) {
	add := func(to *[]string, rels ...string) bool {
		added := false
		for _, rel := range rels {
			if !slices.Contains(*to, rel) {
				*to = append(*to, rel)
				added = true
			}
		}
		return added
	}
	for _, hooks := range hooks {
		hooks = filepath.Clean(hooks)
		if rel, ok := pathutil.Rel(s.Root, hooks); ok {
			add(&s.heldPaths, filepath.ToSlash(rel))
		}
		if real, err := filepath.EvalSymlinks(hooks); err == nil {
			if rel, ok := pathutil.Rel(s.Root, real); ok {
				add(&s.heldPaths, filepath.ToSlash(rel))
			}
		}
		if entries, err := os.ReadDir(hooks); err == nil {
			for _, e := range entries {
				if e.Type()&fs.ModeSymlink != 0 {
					add(&s.heldPaths, linkTargets(s.Root, filepath.Join(hooks, e.Name()))...)
				}
			}
		}
	}
	done := make(map[string]bool)
	for more := true; more; {
		more = false
		for _, l := range links {
			if done[l] {
				continue
			}
			var to *[]string
			switch {
			case s.isPolicy(l):
				to = &s.policyPaths
			case s.isHeld(l):
				to = &s.heldPaths
			default:
				continue
			}
			done[l] = true
			if add(to, linkTargets(s.Root, filepath.Join(s.Root, filepath.FromSlash(l)))...) {
				more = true
			}
		}
	}
	sort.Strings(s.policyPaths)
	sort.Strings(s.heldPaths)
}

// linkTargets returns the paths inside root (relative, with slashes)
// that the link link (absolute) leads through: the path of each hop of
// its chain as the link names it, and the end as the file system
// resolves it (through links in the directories above it too).
func linkTargets(root, link string) []string {
	var out []string
	p := link
	for range 40 { // the kernel's limit of links followed in a path
		t, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = filepath.Clean(t)
		if rel, ok := pathutil.Rel(root, p); ok {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	if real, err := filepath.EvalSymlinks(link); err == nil {
		if rel, ok := pathutil.Rel(root, real); ok {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// leftOutBudget is how many entries of the directories the copy left
// out realLinksLeftOut reads at most: a build tree of millions of files
// is not walked at every run.
const leftOutBudget = 200_000

// realLinksLeftOut returns the links of the real tree among the paths
// the copy left out (skipped), and below those of them that are
// directories, but for the default excludes (dependency trees and
// caches), whose links are not looked at, and past leftOutBudget
// entries.
func realLinksLeftOut(root string, skipped []string) []string {
	var out []string
	budget := leftOutBudget
	for _, rel := range skipped {
		top := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(top)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			out = append(out, rel)
		case fi.IsDir() && !slices.Contains(DefaultExcludes, path.Base(rel)):
			filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if budget--; budget < 0 {
					return filepath.SkipAll
				}
				if d.IsDir() && p != top && slices.Contains(DefaultExcludes, d.Name()) {
					return filepath.SkipDir
				}
				if d.Type()&fs.ModeSymlink != 0 {
					if r, ok := pathutil.Rel(root, p); ok {
						out = append(out, filepath.ToSlash(r))
					}
				}
				return nil
			})
		}
	}
	return out
}

// sameFile reports whether the real regular file name of dfd (of stat
// rst, nil when there is none) has the content and permissions of the
// sandbox's file in (of stat bst): a policy file or configuration the
// agent rewrote as it was (a formatter's pass) is no change to report.
func sameFile(dfd int, name string, rst *unix.Stat_t, in int, bst *unix.Stat_t) bool {
	if dfd < 0 || rst == nil || rst.Mode&unix.S_IFMT != unix.S_IFREG || rst.Size != bst.Size || rst.Mode&0o7777 != bst.Mode&0o777 {
		return false
	}
	fd, err := openFileAt(dfd, name)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	same, err := sameData(in, fd, bst.Size)
	return err == nil && same
}
