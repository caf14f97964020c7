package mount

import (
	"path"
	"strings"

	"golang.org/x/sys/unix"
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
// (lower case, trailing dots and spaces dropped, as NTFS does), so that
// .Claude/Settings.json is held where it would replace
// .claude/settings.json. Matching at any depth and in any case keeps
// some harmless files too (a .vscode/settings.json of a sub-project);
// they wait for an apply.
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
	{".claude.json", "claude's own state, where the project is a home directory: MCP servers per project"},
	{".mcp.json", "claude's project MCP servers: commands it starts"},
	{".gemini/", "gemini's project settings: MCP servers, hooks, commands with shell lines, extensions"},
	{".codex/", "codex's project configuration: MCP servers and the notify command"},
	{"opencode.json", "opencode's project configuration: plugins, MCP servers, agents and their permissions"},
	{"opencode.jsonc", "as opencode.json"},
	{".opencode/", "opencode's project directory: plugins (code opencode loads), agents, commands, tools"},
	{".config/opencode/", "opencode's configuration, where the project is a home directory"},
	{".config/git/", "git's own configuration, where the project is a home directory: hooks path, aliases, fsmonitor, pager"},
	{".gitconfig", "git's own configuration, where the project is a home directory"},
	{".vscode/tasks.json", "VS Code tasks: one can run when the folder opens"},
	{".vscode/settings.json", "VS Code settings: paths of the programs extensions start (interpreters, linters, language servers)"},
	{".vscode/launch.json", "VS Code launch configurations: the programs and pre-launch tasks debugging starts"},
	{"*.code-workspace", "a VS Code workspace: settings, tasks and launch configurations, as .vscode/"},
	{".envrc", "direnv: a shell script run when a shell enters the directory"},
	{"mise.toml", "mise: environment scripts and hooks run when a shell enters the directory, once the file is trusted"},
	{".mise.toml", "as mise.toml"},
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
	names := strings.Split(rel, "/")
	for i, n := range names {
		names[i] = foldName(n)
	}
	for _, r := range rules {
		if matchRun(strings.Split(strings.TrimSuffix(r.Pattern, "/"), "/"), names) {
			return true
		}
	}
	return false
}

// matchRun reports whether the patterns pats match a run of consecutive
// names.
func matchRun(pats, names []string) bool {
	for i := 0; i+len(pats) <= len(names); i++ {
		all := true
		for j, p := range pats {
			if ok, err := path.Match(p, names[i+j]); err != nil || !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// foldName is the name a case-insensitive file system finds for name: in
// lower case, without trailing dots and spaces (NTFS drops them).
func foldName(name string) string {
	return strings.ToLower(strings.TrimRight(name, ". "))
}

// keptBack reports whether the agent's change to rel (a write or a
// removal) stays in the sandbox, as a policy file's (Report.Refused) or,
// without o.SyncConfig, executable configuration's (Report.Held), and
// records it in r when it does.
func keptBack(rel string, o SyncOptions, r *Report) bool {
	switch {
	case IsPolicyFile(rel):
		r.Refused = append(r.Refused, rel)
	case !o.SyncConfig && IsHeldConfig(rel):
		r.Held = append(r.Held, rel)
	default:
		return false
	}
	return true
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
