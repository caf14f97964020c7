//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/discover"
)

// The persona text of the run tests; it must reach the model exactly once.
const personaText = "Persona text for the e2e run: answer in haiku.\n"

// runArgs start each harness non-interactively, allowed to write files,
// as the arguments after `workforce run ... --`. claude as root refuses
// bypassPermissions, so edits are accepted and Read and Write allowed (the
// prompt goes before --allowedTools, which takes several values).
var runArgs = map[string][]string{
	"claude":   {"-p", "write out.txt", "--permission-mode", "acceptEdits", "--allowedTools", "Read,Write"},
	"opencode": {"run", "write out.txt"},
	"codex":    {"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "write out.txt"},
	"gemini":   {"-p", "write out.txt", "--approval-mode", "auto_edit"},
}

// runModels are the persona models: ones each harness's scripted
// environment serves (codex needs a model it knows to offer apply_patch).
var runModels = map[string]string{"claude": "claude-e2e", "opencode": "mock/m", "codex": "gpt-5.5", "gemini": geminiModel}

// writeStep makes the harness write out.txt in its working directory with
// its own tool.
func writeStep(harness string) step {
	switch harness {
	case "claude":
		return step{Tool: "Write", Args: map[string]any{"file_path": "{{cwd}}/out.txt", "content": written}}
	case "opencode":
		return step{Tool: "write", Args: map[string]any{"filePath": "{{cwd}}/out.txt", "content": written}}
	case "gemini":
		return step{Tool: "write_file", Args: map[string]any{"file_path": "{{cwd}}/out.txt", "content": written}}
	default:
		return step{Tool: "apply_patch", Args: map[string]any{"input": "*** Begin Patch\n*** Add File: out.txt\n+" + written + "*** End Patch\n"}}
	}
}

// readStep makes the harness read a file with its own tool.
func readStep(harness, rel string) step {
	switch harness {
	case "claude":
		return step{Tool: "Read", Args: map[string]any{"file_path": "{{cwd}}/" + rel}}
	case "opencode":
		return step{Tool: "read", Args: map[string]any{"filePath": "{{cwd}}/" + rel}}
	case "gemini":
		return step{Tool: "read_file", Args: map[string]any{"file_path": "{{cwd}}/" + rel}}
	default:
		return step{Tool: "exec_command", Args: map[string]any{"cmd": "cat " + rel}}
	}
}

// writePersona installs persona e2e in the user layer of home: the text in
// the harness's channel, in mode.
func writePersona(t *testing.T, home, harness, mode string) {
	t.Helper()
	pdir := filepath.Join(home, ".agentworkforce", "workforce", "personas")
	os.MkdirAll(pdir, 0o755)
	channel := "agentsMd"
	if harness == "claude" {
		channel = "claudeMd"
	}
	spec := fmt.Sprintf(`{"id": "e2e", "intent": "test", "description": "e2e persona",
 %q: %q, %q: %q, "tiers": {"best": {"harness": %q, "model": %q}}}`,
		channel+"Content", personaText, channel+"Mode", mode, harness, runModels[harness])
	if err := os.WriteFile(filepath.Join(pdir, "e2e.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// workforceEnv is e's environment for `workforce run` started in dir as a
// shell would start it: PWD names dir, OLDPWD the directory before.
func workforceEnv(e *scriptedEnv, dir, before string) []string {
	return append(append([]string(nil), e.vars...),
		"AGENT_WORKFORCE_HOME="+filepath.Join(e.home, ".agentworkforce", "workforce"),
		"PWD="+dir, "OLDPWD="+before)
}

// snapshot maps every file and symlink below root, outside .git
// directories, to its mode and content hash (a symlink to its target).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			out[rel] = "symlink " + target
			return err
		}
		data, err := os.ReadFile(path)
		out[rel] = fmt.Sprintf("%v %x", fi.Mode(), sha256.Sum256(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSnapshots lists what changed from before to after.
func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "deleted "+k)
		} else if w != v {
			d = append(d, "changed "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "created "+k)
		}
	}
	sort.Strings(d)
	return d
}

// firstMainStrings returns the string values of the first main request.
func firstMainStrings(s *scripted) []string {
	main := s.mainRequests()
	if len(main) == 0 {
		return nil
	}
	return stringsOf(s.requests()[main[0]])
}

// instructionText returns the one string of strs holding the harness's
// instruction blocks, or "".
func instructionText(harness string, strs []string) string {
	for _, str := range strs {
		if strings.Contains(str, markers[harness]) {
			return str
		}
	}
	return ""
}

// sealed is what a sealed run must show: the run of harness in the user's
// real directory dir, in mode, gave the model the persona text exactly
// once, in the one instruction file the harness loaded, after the real
// context in extend mode (wantReal, the text the harness loads in dir);
// the harness told the model a working directory that is not dir; and the
// real tree (snapshots keyed by paths relative to its root) changed by
// outRel, the out.txt of dir, alone.
func sealed(harness, mode, dir, wantReal, outRel string, s *scripted, before, after map[string]string) []error {
	var errs []error
	strs := firstMainStrings(s)
	if len(strs) == 0 {
		return []error{errors.New("the harness sent no main request")}
	}
	if cwd := s.workdir(); cwd == "" || cwd == dir || strings.HasPrefix(cwd, dir+"/") {
		errs = append(errs, fmt.Errorf("the harness told the model it works in %q, the real directory", cwd))
	}
	n := 0
	for _, str := range strs {
		n += strings.Count(str, strings.TrimSpace(personaText))
	}
	if n != 1 {
		errs = append(errs, fmt.Errorf("the persona text reached the model %d times, want once", n))
	}
	sent := instructionText(harness, strs)
	if got := strings.Count(sent, markers[harness]); got != 1 {
		errs = append(errs, fmt.Errorf("the harness sent %d instruction blocks, want the materialized file alone:\n%q", got, sent))
	}
	want := personaText
	if mode == "extend" && wantReal != "" {
		want = wantReal + "\n\n---\n\n" + personaText
	}
	if harness == "claude" {
		want = strings.TrimSpace(want)
	}
	if !strings.Contains(sent, want) {
		errs = append(errs, fmt.Errorf("the harness sent\n%q\nwhich does not contain\n%q", sent, want))
	}
	if changes := diffSnapshots(before, after); len(changes) != 1 || changes[0] != "created "+outRel {
		errs = append(errs, fmt.Errorf("the real tree changed by %q, want %s created by sync-back alone", changes, outRel))
	}
	return errs
}

// stringsOf returns every string value in a JSON body.
func stringsOf(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	return appendStrings(nil, v)
}

// realContext is the text of the project files harness loads in dir, as
// extend mode folds it.
func realContext(t *testing.T, harness, dir string, home string) string {
	t.Helper()
	p, _ := discover.ForHarness(harness)
	o := discover.Options{Home: home, CodexHome: filepath.Join(home, ".codex")}
	if harness == "gemini" {
		o = geminiOptions(p, []string{"HOME=" + home}) // its settings' names
	}
	real, err := discover.Chain(p, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, f := range real.ProjectFiles() {
		texts = append(texts, f.Text)
	}
	return strings.Join(texts, "\n\n")
}

// TestRun runs `workforce run` with each real harness, in both modes, on
// every tree of the discovery matrix, started as a shell starts it (PWD
// and OLDPWD naming the real directories). The scripted model makes the
// harness write out.txt in its working directory. The run must be sealed:
// the model is told the sandbox as working directory, gets the persona
// text once in the materialized file (after the real context in extend
// mode), and the real tree changes by out.txt alone, through sync-back.
func TestRun(t *testing.T) {
	for _, tree := range trees {
		for _, h := range []string{"codex", "opencode", "claude", "gemini"} {
			for _, mode := range []string{"overwrite", "extend"} {
				t.Run(tree.name+"/"+h+"/"+mode, func(t *testing.T) {
					root := makeTree(t, tree.archive)
					dir := filepath.Join(root, tree.dir)
					s := newScripted(writeStep(h), step{Text: "finished"})
					e := newScriptedEnv(t, s)
					writePersona(t, e.home, h, mode)
					wantReal := realContext(t, h, dir, e.home)
					before := snapshot(t, root)
					e.vars = workforceEnv(e, dir, root)
					out := e.run(t, dir, append([]string{workforce, "run", "e2e", "--"}, runArgs[h]...)...)
					outRel := filepath.Join(tree.dir, "out.txt")
					for _, err := range sealed(h, mode, dir, wantReal, outRel, s, before, snapshot(t, root)) {
						t.Errorf("%v\nworkforce output:\n%s", err, out)
					}
					if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
						t.Errorf("out.txt in the real directory = %q, %v; want %q (synced back)", got, err, written)
					}
					sessions, _ := os.ReadDir(filepath.Join(e.home, ".agentworkforce", "workforce", "sessions"))
					if len(sessions) != 0 {
						t.Errorf("%d sessions left behind", len(sessions))
					}
				})
			}
		}
	}
}

// TestSealCanFail is the negative control of TestRun: a harness started in
// a sandbox copy with a stale PWD, as workforce did before it set PWD,
// must fail the same checks. opencode takes its directory from $PWD, so it
// works in the real tree and never sees the materialized file.
func TestSealCanFail(t *testing.T) {
	root := makeTree(t, trees[0].archive)
	dir := filepath.Join(root, trees[0].dir)
	box := t.TempDir()
	if out, err := exec.Command("cp", "-a", root+"/.", box).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	boxDir := filepath.Join(box, trees[0].dir)
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		filepath.WalkDir(box, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Name() == name {
				os.Remove(path)
			}
			return nil
		})
	}
	os.WriteFile(filepath.Join(boxDir, "AGENTS.md"), []byte(personaText), 0o644)
	s := newScripted(writeStep("opencode"), step{Text: "finished"})
	e := newScriptedEnv(t, s)
	before := snapshot(t, root)
	e.vars = append(e.vars, "PWD="+dir)
	e.run(t, boxDir, append([]string{filepath.Join(binDir, "opencode")}, runArgs["opencode"]...)...)
	errs := sealed("opencode", "overwrite", dir, "", filepath.Join(trees[0].dir, "out.txt"), s, before, snapshot(t, root))
	if len(errs) == 0 {
		t.Fatal("opencode started with a stale PWD passed the sealed-run checks")
	}
	for _, err := range errs {
		t.Logf("caught, as it should be: %v", err)
	}
}

// nestedBlock returns the block carrying text in body, with dir replaced
// by "<dir>": claude's and opencode's <system-reminder> around a nested
// instruction file.
func nestedBlock(body []byte, text, dir string) string {
	re := regexp.MustCompile(`(?s)<system-reminder>(?:[^<]|<[^/])*?` + regexp.QuoteMeta(text) + `.*?</system-reminder>`)
	for _, str := range stringsOf(body) {
		if m := re.FindString(str); m != "" {
			return strings.ReplaceAll(m, dir, "<dir>")
		}
	}
	return ""
}

// lazyTree has instruction files at the root and next to the file the
// agent reads.
const lazyTree = `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
root agents
-- repo/CLAUDE.md --
root claude
-- repo/src/billing/invoice.go --
package billing

// InvoiceTotal sums the e2e invoice lines.
func InvoiceTotal() {}
-- repo/src/billing/AGENTS.md --
billing agents rules
-- repo/src/billing/CLAUDE.md --
billing claude rules
`

// TestLazyLoading: the scripted model's first answer asks the harness to
// read src/billing/invoice.go. The request that follows must carry the
// nested instruction file exactly as when the same harness runs directly
// in the real tree (extend mode keeps it visible), and not at all in
// overwrite mode (which hides the whole convention).
func TestLazyLoading(t *testing.T) {
	nested := map[string]string{"claude": "billing claude rules", "opencode": "billing agents rules"}
	for _, h := range []string{"claude", "opencode"} {
		t.Run(h, func(t *testing.T) {
			// Directly in the real tree.
			root := makeTree(t, lazyTree)
			dir := filepath.Join(root, "repo")
			s := newScripted(readStep(h, "src/billing/invoice.go"), step{Text: "finished"})
			e := newScriptedEnv(t, s)
			e.run(t, dir, append([]string{filepath.Join(binDir, h)}, runArgs[h]...)...)
			main := s.mainRequests()
			if len(main) < 2 {
				t.Fatalf("the direct run sent %d main requests, want 2", len(main))
			}
			want := nestedBlock(s.requests()[main[1]], nested[h], dir)
			if want == "" {
				t.Fatalf("the direct run did not load the nested instruction file after the read")
			}
			t.Logf("directly: %q", want)

			for _, mode := range []string{"extend", "overwrite"} {
				root := makeTree(t, lazyTree)
				dir := filepath.Join(root, "repo")
				before := snapshot(t, root)
				s := newScripted(readStep(h, "src/billing/invoice.go"), step{Text: "finished"})
				e := newScriptedEnv(t, s)
				writePersona(t, e.home, h, mode)
				e.vars = workforceEnv(e, dir, root)
				out := e.run(t, dir, append([]string{workforce, "run", "e2e", "--"}, runArgs[h]...)...)
				main := s.mainRequests()
				if len(main) < 2 {
					t.Fatalf("%s: workforce run sent %d main requests, want 2:\n%s", mode, len(main), out)
				}
				got := nestedBlock(s.requests()[main[1]], nested[h], s.workdir())
				switch {
				case mode == "extend" && got != want:
					t.Errorf("extend: after the read the harness sent\n%q\nwant, as in the real tree,\n%q", got, want)
				case mode == "overwrite" && got != "":
					t.Errorf("overwrite: the harness loaded the repository's nested file:\n%q", got)
				}
				if d := diffSnapshots(before, snapshot(t, root)); len(d) != 0 {
					t.Errorf("%s: the real tree changed: %q", mode, d)
				}
			}
		})
	}
}
