package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReads confines the probe with a read policy and reads inside and
// outside it: what is denied fails with EACCES, by any name; its siblings,
// the allowed entries below a denied directory and the writable set stay
// readable.
func TestReads(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	ssh, secret := filepath.Join(home, ".ssh"), filepath.Join(home, "secret")
	allowed, w := filepath.Join(secret, "allowed"), filepath.Join(secret, "w")
	for _, d := range []string{ssh, allowed, w, filepath.Join(home, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id_ed25519", ".bashrc", "src/x", "secret/x", "secret/allowed/y", "secret/w/f"} {
		writeFile(t, filepath.Join(home, f), "data\n")
	}
	if err := os.Symlink(".ssh", filepath.Join(home, "keys")); err != nil {
		t.Fatal(err)
	}
	// A program in a denied directory, and the same beside it.
	prog, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(secret, "true"), filepath.Join(home, "src", "true")} {
		if err := os.WriteFile(p, prog, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Dirs: []string{w}, Devices: TerminalDevices,
		Read: &ReadPolicy{Deny: []string{ssh, secret}, Allow: []string{allowed}}}
	cases := []struct {
		what string
		op   []string
		want string
	}{
		{"a denied file", []string{"read", filepath.Join(ssh, "id_ed25519")}, "EACCES"},
		{"a denied directory's listing", []string{"list", ssh}, "EACCES"},
		{"a denied file through a symlink", []string{"read", filepath.Join(home, "keys", "id_ed25519")}, "EACCES"},
		{"a file in a denied directory", []string{"read", filepath.Join(secret, "x")}, "EACCES"},
		{"the listing of a directory on the way", []string{"list", home}, "EACCES"},
		{"a sibling file", []string{"read", filepath.Join(home, ".bashrc")}, "OK"},
		{"a file in a sibling directory", []string{"read", filepath.Join(home, "src", "x")}, "OK"},
		{"a sibling directory's listing", []string{"list", filepath.Join(home, "src")}, "OK"},
		{"an allowed file below a denied directory", []string{"read", filepath.Join(allowed, "y")}, "OK"},
		{"a file in the writable directory", []string{"read", filepath.Join(w, "f")}, "OK"},
		{"a file written there", []string{"write", filepath.Join(w, "new")}, "OK"},
		{"and read back", []string{"read", filepath.Join(w, "new")}, "OK"},
		{"a system file", []string{"read", "/etc/passwd"}, "OK"},
		{"a program", []string{"exec", "/bin/sh", "-c", "true"}, "OK"},
		{"a program in a denied directory", []string{"exec", filepath.Join(secret, "true")}, "EACCES"},
		{"a program beside it", []string{"exec", filepath.Join(home, "src", "true")}, "OK"},
	}
	var ops [][]string
	for _, c := range cases {
		ops = append(ops, c.op)
	}
	got := probe(t, p, ops...)
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s (%q): %s, want %s", c.what, c.op, got[i], c.want)
		}
	}
	// Unconfined, the same reads succeed: the test can fail.
	got = probeUnconfined(t, ops[:5]...)
	if want := "OK OK OK OK OK"; strings.Join(got, " ") != want {
		t.Errorf("unconfined, the denied reads gave %q, want %q", got, want)
	}
}

// TestReadsAfterLaunch: the rules name what the walk found at launch. A
// file made in a directory on the way to a denied path after the launch,
// or one replaced there by a rename, is unreadable; a file made in a
// directory granted whole reads.
func TestReadsAfterLaunch(t *testing.T) {
	needLandlock(t)
	home, w := t.TempDir(), t.TempDir()
	for _, d := range []string{".ssh", "src"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n")
	p := Policy{Dirs: []string{w}, Devices: TerminalDevices, Read: &ReadPolicy{Deny: []string{filepath.Join(home, ".ssh")}}}
	read, ready := filepath.Join(w, "read"), filepath.Join(w, "ready")
	cmd := probeCommand(t, []string{"read", filepath.Join(home, ".gitconfig")}, []string{"write", read}, []string{"await", ready},
		[]string{"read", filepath.Join(home, "new")}, []string{"read", filepath.Join(home, ".gitconfig")},
		[]string{"read", filepath.Join(home, "src", "new")})
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if _, err := Start(cmd, p); err != nil {
		t.Fatal(err)
	}
	// Confined by now (Start returns once the program runs), and the
	// first read done.
	for i := 0; i < 1000; i++ {
		if _, err := os.Stat(read); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	writeFile(t, filepath.Join(home, "new"), "new\n")
	writeFile(t, filepath.Join(home, "src", "new"), "new\n")
	writeFile(t, filepath.Join(home, ".gitconfig.tmp"), "[user]\n\tname = u\n")
	if err := os.Rename(filepath.Join(home, ".gitconfig.tmp"), filepath.Join(home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, ready, "")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	want := `["OK","OK","OK","EACCES","EACCES","OK"]`
	if got := strings.TrimSpace(stdout.String()); got != want {
		t.Errorf("read ~/.gitconfig, say so, wait, read ~/new, the replaced ~/.gitconfig, ~/src/new: %s, want %s", got, want)
	}
}

// TestReadsStrict confines the probe to the strict read roots: the
// system stays readable, a home directory does not.
func TestReadsStrict(t *testing.T) {
	needLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home, w := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".bashrc"), "data\n")
	writeFile(t, filepath.Join(w, "f"), "data\n")
	p := Policy{Dirs: []string{w}, Devices: TerminalDevices,
		Read: &ReadPolicy{Strict: true, Roots: []string{filepath.Dir(exe)}}}
	ops := [][]string{
		{"read", filepath.Join(home, ".bashrc")},
		{"list", home},
		{"list", "/root"},
		{"read", filepath.Join(w, "f")},
		{"read", "/etc/passwd"},
		{"list", "/usr"},
		{"read", "/proc/self/status"},
	}
	want := []string{"EACCES", "EACCES", "EACCES", "OK", "OK", "OK", "OK"}
	if u, err := os.UserHomeDir(); err == nil && u != "" {
		ops = append(ops, []string{"list", u})
		want = append(want, "EACCES")
	}
	got := probe(t, p, ops...)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("strict: %q gave\n%q, want\n%q", ops, got, want)
	}
}

// TestReadRulesHome measures the read rules of the user's home with the
// issue's deny list: their count and the time to list them (the issue
// measured 43 rules for /root, 0.5 to 3 ms).
func TestReadRulesHome(t *testing.T) {
	u, err := os.UserHomeDir()
	if err != nil || u == "" {
		t.Skip("no home directory")
	}
	var deny []string
	for _, d := range []string{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc",
		".git-credentials", ".config/git/credentials", ".npmrc", ".pypirc", ".config/gh", ".password-store", ".env",
		".claude", ".claude.json", ".codex", ".config/opencode", ".local/share/opencode", ".gemini", ".agentworkforce/workforce"} {
		deny = append(deny, filepath.Join(u, d))
	}
	r := &ReadPolicy{Deny: deny}
	start := time.Now()
	d, a := r.effective()
	rules, err := ReadRules(d, a, osList)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Errorf("ReadRules of %s: no rule", u)
	}
	for _, rule := range rules {
		if within(rule.Path, filepath.Join(u, ".ssh")) || rule.Path == u {
			t.Errorf("ReadRules of %s grants %s", u, rule.Path)
		}
	}
	t.Logf("%s: %d rules in %v", u, len(rules), took)
}
