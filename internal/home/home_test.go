package home

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestConfigEdit(t *testing.T) {
	home := t.TempDir()
	c, err := ReadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if !c.AddDir(home, "/team", true) || c.AddDir(home, "/team", false) {
		t.Fatal("AddDir should add once")
	}
	must(t, WriteConfig(home, c))
	c, err = ReadConfig(home)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Dirs(home), []string{"/team", filepath.Join(home, "personas")}; !slices.Equal(got, want) {
		t.Errorf("Dirs() = %q, want %q", got, want)
	}
	if !c.RemoveDir(home, "/team") || c.RemoveDir(home, "/team") {
		t.Fatal("RemoveDir should remove once")
	}
}

func TestReadConfigResults(t *testing.T) {
	dir := t.TempDir()
	c, err := ReadConfig(dir)
	if err != nil || c.Results.MaxAge != nil || c.Results.MaxCount != nil {
		t.Fatalf("ReadConfig without a file = %+v, %v, want no results bounds", c, err)
	}
	must(t, os.WriteFile(ConfigPath(dir), []byte(`{"results": {"maxAge": "90m", "maxCount": 0}, "review": true, "tree": "overlay"}`), 0o644))
	if c, err = ReadConfig(dir); err != nil {
		t.Fatal(err)
	}
	if c.Tree != "overlay" {
		t.Errorf("Tree = %q, want overlay", c.Tree)
	}
	if r := c.Results; r.MaxAge == nil || *r.MaxAge != 90*time.Minute || r.MaxCount == nil || *r.MaxCount != 0 {
		t.Errorf("Results = %+v, want maxAge 90m and maxCount 0", r)
	}
	// Rewriting the file keeps the key as it was.
	must(t, WriteConfig(dir, c))
	if data, _ := os.ReadFile(ConfigPath(dir)); !strings.Contains(string(data), `"maxAge": "90m"`) {
		t.Errorf("WriteConfig lost results:\n%s", data)
	}
}

func TestDir(t *testing.T) {
	t.Setenv(Env, "rel/home")
	got, err := Dir()
	wd, _ := os.Getwd()
	if want := filepath.Join(wd, "rel/home"); err != nil || got != want {
		t.Errorf("Dir() with %s=rel/home = %q, %v, want %q", Env, got, err, want)
	}
	t.Setenv(Env, "")
	t.Setenv("HOME", "/u")
	if got, err := Dir(); err != nil || got != "/u/.agentworkforce/workforce" {
		t.Errorf("Dir() = %q, %v, want /u/.agentworkforce/workforce", got, err)
	}
}

func TestReadConfigErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{"{\n  \"personaDirs\": [\"a\",]\n}", "config.json:2:23: invalid JSON: "},
		{`{"personaDirs": "x"}`, "config.json: personaDirs: must be a list of directory paths"},
		{`{"review": "yes"}`, "config.json: review: must be true or false"},
		{`{"tree": "overlays"}`, `config.json: tree: must be "copy", "overlay" or "auto"`},
		{`{"tree": true}`, `config.json: tree: must be "copy", "overlay" or "auto"`},
		{`{"results": []}`, "config.json: results: must be an object"},
		{`{"results": {"maxAge": 720}}`, "config.json: results.maxAge: must be a duration string"},
		{`{"results": {"maxAge": "30d"}}`, `config.json: results.maxAge: "30d" is not a duration`},
		{`{"results": {"maxAge": "-1h"}}`, `config.json: results.maxAge: "-1h" is not a duration`},
		{`{"results": {"maxCount": -1}}`, "config.json: results.maxCount: must be a whole number, 0 or more (0 for no limit), not -1"},
		{`{"results": {"maxCount": 2.5}}`, "config.json: results.maxCount: must be a whole number"},
		{`{"results": {"maxcount": 5}}`, "config.json: results.maxcount: unknown key"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		must(t, os.WriteFile(ConfigPath(dir), []byte(tt.data), 0o644))
		_, err := ReadConfig(dir)
		if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, tt.want)) {
			t.Errorf("ReadConfig(%s) = %v, want prefix %q", tt.data, err, tt.want)
		}
	}
}

func TestProject(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(repo, "a", ProjectDir), 0o755))
	must(t, os.MkdirAll(filepath.Join(repo, "a/b/c"), 0o755))
	must(t, os.MkdirAll(filepath.Join(root, ProjectDir), 0o755))
	deep := filepath.Join(repo, "a/b/c")
	if got := ProjectRoot(deep, RootMarkers); got != repo {
		t.Errorf("ProjectRoot(%s) = %q, want %q", deep, got, repo)
	}
	if got := ProjectRoot(root, RootMarkers); got != root {
		t.Errorf("ProjectRoot(%s) without a marker = %q, want itself", root, got)
	}
	layer := ProjectLayer(deep, RootMarkers)
	if want := filepath.Join(repo, "a", ProjectDir); layer != want {
		t.Errorf("ProjectLayer(%s) = %q, want %q", deep, layer, want)
	}
	if got := ProjectLayer(filepath.Join(repo), RootMarkers); got != "" {
		t.Errorf("ProjectLayer(%s) = %q, want none: the walk stops at the root marker", repo, got)
	}
	if got, ok := ProjectRootOf(layer); !ok || got != filepath.Join(repo, "a") {
		t.Errorf("ProjectRootOf(%s) = %q, %v", layer, got, ok)
	}
	if _, ok := ProjectRootOf(deep); ok {
		t.Errorf("ProjectRootOf(%s) = ok, want not a project layer", deep)
	}
}

func TestReadConfigSandbox(t *testing.T) {
	t.Setenv("HOME", "/u")
	strict, off := confine.Strict, confine.Off
	tests := []struct {
		data  string
		mode  *confine.Mode
		allow []string
		// deny and read are denyRead and allowRead.
		deny, read []string
		err        string
	}{
		{data: `{}`},
		{data: `{"sandbox": "strict"}`, mode: &strict},
		{data: `{"sandbox": {"mode": "off"}}`, mode: &off},
		{data: `{"sandbox": {"allow": ["/var/cache/x", "~/.cache/go-build", "~", "/a/b/../c/"]}}`, allow: []string{"/var/cache/x", "/u/.cache/go-build", "/u", "/a/c"}},
		{data: `{"sandbox": {"mode": "on", "allow": []}}`, mode: new(confine.Mode)},
		{data: `{"sandbox": "sometimes"}`, err: `config.json: sandbox: unknown sandbox mode "sometimes": want on, off or strict`},
		{data: `{"sandbox": true}`, err: `config.json: sandbox: must be a mode ("on", "off" or "strict") or an object`},
		{data: `{"sandbox": null}`, err: "config.json: sandbox: must be a mode"},
		{data: `{"sandbox": {"mode": 1}}`, err: `config.json: sandbox.mode: must be "on", "off" or "strict"`},
		{data: `{"sandbox": {"mode": "ON"}}`, err: `config.json: sandbox.mode: unknown sandbox mode "ON"`},
		{data: `{"sandbox": {"allow": "/x"}}`, err: "config.json: sandbox.allow: must be a list of absolute paths"},
		{data: `{"sandbox": {"allow": ["/x", "rel"]}}`, err: `config.json: sandbox.allow[1]: "rel" is not an absolute path`},
		{data: `{"sandbox": {"allow": [""]}}`, err: `config.json: sandbox.allow[0]: "" is not an absolute path`},
		{data: `{"sandbox": {"denyRead": ["~/secrets", "/srv/keys/"], "allowRead": ["~/.ssh/config"]}}`, deny: []string{"/u/secrets", "/srv/keys"}, read: []string{"/u/.ssh/config"}},
		{data: `{"sandbox": {"denyRead": "/x"}}`, err: "config.json: sandbox.denyRead: must be a list of absolute paths"},
		{data: `{"sandbox": {"denyRead": ["/x", "rel"]}}`, err: `config.json: sandbox.denyRead[1]: "rel" is not an absolute path`},
		{data: `{"sandbox": {"allowRead": [""]}}`, err: `config.json: sandbox.allowRead[0]: "" is not an absolute path`},
		{data: `{"sandbox": {"allowed": []}}`, err: "config.json: sandbox.allowed: unknown key: sandbox takes mode, allow, denyRead and allowRead"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		must(t, os.WriteFile(ConfigPath(dir), []byte(tt.data), 0o644))
		c, err := ReadConfig(dir)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, tt.err)) {
				t.Errorf("ReadConfig(%s) = %v, want prefix %q", tt.data, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ReadConfig(%s) = %v", tt.data, err)
			continue
		}
		if sb := c.Sandbox; (sb.Mode == nil) != (tt.mode == nil) || sb.Mode != nil && *sb.Mode != *tt.mode || !slices.Equal(sb.Allow, tt.allow) {
			t.Errorf("ReadConfig(%s).Sandbox = %v %q, want %v %q", tt.data, sb.Mode, sb.Allow, tt.mode, tt.allow)
		}
		if sb := c.Sandbox; !slices.Equal(sb.DenyRead, tt.deny) || !slices.Equal(sb.AllowRead, tt.read) {
			t.Errorf("ReadConfig(%s).Sandbox denyRead %q allowRead %q, want %q %q", tt.data, sb.DenyRead, sb.AllowRead, tt.deny, tt.read)
		}
		// Rewriting the file keeps the key as it was.
		must(t, WriteConfig(dir, c))
		if back, err := ReadConfig(dir); err != nil || !slices.Equal(back.Sandbox.Allow, c.Sandbox.Allow) {
			t.Errorf("%s written back reads %v, %v", tt.data, back, err)
		}
	}
}

// FuzzReadSandbox: whatever "sandbox" holds, ReadConfig does not panic,
// and what it accepts is a known mode and absolute, clean paths.
func FuzzReadSandbox(f *testing.F) {
	for _, s := range []string{`"on"`, `"strict"`, `{"mode": "off", "allow": ["~/x", "/a/../b"]}`, `{"allow": ["rel"]}`, `[]`, `null`, `{"mode": null}`, `{"allow": [null]}`, `"~"`, `{"denyRead": ["~/.x", "/a/"], "allowRead": ["../r"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		dir := t.TempDir()
		if err := os.WriteFile(ConfigPath(dir), []byte(`{"sandbox": `+v+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadConfig(dir)
		if err != nil {
			return
		}
		if m := c.Sandbox.Mode; m != nil && *m != confine.On && *m != confine.Off && *m != confine.Strict {
			t.Errorf("sandbox %s: mode %v", v, *m)
		}
		for _, p := range slices.Concat(c.Sandbox.Allow, c.Sandbox.DenyRead, c.Sandbox.AllowRead) {
			if !filepath.IsAbs(p) || filepath.Clean(p) != p {
				t.Errorf("sandbox %s: allowed path %q", v, p)
			}
		}
	})
}

// TestLayout checks where the files of a home are that commands reach
// through this package rather than naming them.
func TestLayout(t *testing.T) {
	for got, want := range map[string]string{
		HarnessVersions("/h"): "/h/cache/harness-versions.json",
		WorkerDir("/h"):       "/h/worker",
		CreateDir("/h"):       "/h/create",
		CacheDir("/h"):        "/h/cache",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestReadConfigNetwork(t *testing.T) {
	presets := func(p ...string) *[]string { p = append([]string{}, p...); return &p }
	tests := []struct {
		data string
		want *netspec.Spec
		err  string
	}{
		{data: `{}`},
		{data: `{"network": {}}`, want: &netspec.Spec{}},
		{data: `{"network": {"mode": "open"}}`, want: &netspec.Spec{Mode: "open"}},
		{data: `{"network": {"mode": "allowlist", "allow": ["Example.com", "*.b.org:443"], "presets": ["dev"]}}`,
			want: &netspec.Spec{Mode: "allowlist", Allow: []string{"Example.com", "*.b.org:443"}, Presets: presets("dev")}},
		// [] drops the presets, which absent keeps.
		{data: `{"network": {"presets": []}}`, want: &netspec.Spec{Presets: presets()}},
		{data: `{"network": "open"}`, err: `config.json: network: must be an object`},
		{data: `{"network": null}`, err: `config.json: network: must be an object`},
		{data: `{"network": {"mode": "wide"}}`, err: `config.json:1:22: network.mode: unknown network mode "wide": want none, allowlist, open`},
		{data: `{"network": {"mode": 1}}`, err: `config.json:1:22: network.mode: must be "allowlist", "open" or "none"`},
		{data: "{\"network\": {\n \"allow\": [\"ok.com\",\n  \"bad host\"]}}", err: `config.json:3:3: network.allow[1]: network rule "bad host": character ' ' is not allowed`},
		{data: `{"network": {"allow": "a.com"}}`, err: `network.allow: must be a list of HOST or HOST:PORT`},
		{data: `{"network": {"presets": ["dev", "all"]}}`, err: `network.presets[1]: unknown network preset "all": want dev`},
		{data: `{"network": {"presets": null}}`, err: `network.presets: must be a list of preset names`},
		{data: `{"network": {"allowed": []}}`, err: `network.allowed: unknown key: network takes mode, allow and presets`},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		must(t, os.WriteFile(ConfigPath(dir), []byte(tt.data), 0o644))
		c, err := ReadConfig(dir)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "config.json")) || !strings.Contains(err.Error(), strings.TrimPrefix(tt.err, "config.json")) {
				t.Errorf("ReadConfig(%s) = %v, want %q", tt.data, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ReadConfig(%s) = %v", tt.data, err)
			continue
		}
		if !reflect.DeepEqual(c.Network, tt.want) {
			t.Errorf("ReadConfig(%s).Network = %+v, want %+v", tt.data, c.Network, tt.want)
		}
		// Rewriting the file keeps the key as it was.
		must(t, WriteConfig(dir, c))
		if back, err := ReadConfig(dir); err != nil || !reflect.DeepEqual(back.Network, c.Network) {
			t.Errorf("%s written back reads %+v, %v", tt.data, back.Network, err)
		}
	}
}

// FuzzReadNetwork: whatever "network" holds, ReadConfig does not panic;
// what it accepts passes netspec's checks, and an error names the file
// and a network field.
func FuzzReadNetwork(f *testing.F) {
	for _, s := range []string{`{}`, `{"mode": "open"}`, `{"allow": ["a.com:1", "[::1]:2", "*.b"], "presets": []}`, `{"presets": null}`,
		`{"allow": [1]}`, `{"mode": "x"}`, `[]`, `null`, `{"allow": ["a b"]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		dir := t.TempDir()
		if err := os.WriteFile(ConfigPath(dir), []byte(`{"network": `+v+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadConfig(dir)
		if err != nil {
			if !strings.HasPrefix(err.Error(), ConfigPath(dir)) {
				t.Errorf("network %s: error %q does not name the file", v, err)
			}
			return
		}
		if c.Network == nil {
			t.Fatalf("network %s: accepted, but Network is nil", v)
		}
		if field, err := c.Network.Check(); err != nil {
			t.Errorf("network %s: accepted, but %s: %v", v, field, err)
		}
	})
}
