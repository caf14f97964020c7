package confine

import (
	"encoding/json"
	"go/build"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want Mode
		err  string
	}{
		{"on", On, ""},
		{"off", Off, ""},
		{"strict", Strict, ""},
		{"", On, `unknown sandbox mode "": want on, off or strict`},
		{"ON", On, `unknown sandbox mode "ON"`},
		{"true", On, `unknown sandbox mode "true"`},
		{" on", On, `unknown sandbox mode " on"`},
	}
	for _, tc := range tests {
		got, err := ParseMode(tc.in)
		if got != tc.want || errText(err) != "" && tc.err == "" || tc.err != "" && !strings.Contains(errText(err), tc.err) {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
	if On != Mode(0) {
		t.Errorf("the zero Mode is %v, want on, the default", Mode(0))
	}
}

func TestModeText(t *testing.T) {
	for _, m := range []Mode{On, Off, Strict} {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back Mode = 42
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("%v: encoded %s, decoded %v, %v", m, b, back, err)
		}
	}
	var m Mode
	if err := json.Unmarshal([]byte(`"sometimes"`), &m); err == nil || !strings.Contains(err.Error(), `unknown sandbox mode "sometimes"`) {
		t.Errorf("decoding \"sometimes\": %v", err)
	}
	if _, err := Mode(7).MarshalText(); err == nil {
		t.Errorf("Mode(7).MarshalText() succeeded")
	}
}

func TestPolicyCheck(t *testing.T) {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home", "user")
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	stmp := filepath.Join(tmp, "session", "tmp")
	ov := Overlay{Lower: filepath.Join(tmp, "project"), Upper: filepath.Join(tmp, "session", "upper"), Work: filepath.Join(tmp, "session", "work"),
		Target: filepath.Join(tmp, "session", "tree")}
	toHome := filepath.Join(tmp, "to-home")
	toRoot := filepath.Join(tmp, "to-root")
	for link, target := range map[string]string{toHome: home, toRoot: "/"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		p    Policy
		err  string
	}{
		{"empty", Policy{}, ""},
		{"the usual", Policy{Dirs: []string{filepath.Join(tmp, "tree"), filepath.Join(home, ".claude")}, Files: []string{filepath.Join(home, ".claude.json")}, Devices: TerminalDevices}, ""},
		{"missing paths pass", Policy{Dirs: []string{filepath.Join(tmp, "missing")}}, ""},
		{"relative", Policy{Dirs: []string{"tree"}}, `sandbox writable directory "tree": not an absolute path`},
		{"empty path", Policy{Files: []string{""}}, `sandbox writable file "": empty path`},
		{"not clean", Policy{Dirs: []string{tmp + "/a/../b"}}, "not a clean path"},
		{"trailing slash", Policy{Dirs: []string{tmp + "/"}}, "not a clean path"},
		{"NUL", Policy{Files: []string{"/tmp/a\x00b"}}, "NUL"},
		{"root", Policy{Dirs: []string{"/"}}, `sandbox writable directory "/": the root directory`},
		{"home", Policy{Dirs: []string{home}}, "the home directory"},
		{"above home", Policy{Dirs: []string{filepath.Dir(home)}}, "the home directory"},
		{"a symlink to home", Policy{Dirs: []string{toHome}}, "resolves to " + `"` + home + `"` + ", the home directory"},
		{"a symlink to the root", Policy{Dirs: []string{toRoot}}, "the root directory"},
		{"home as a single file passes", Policy{Files: []string{filepath.Join(home, ".claude.json")}}, ""},
		{"below home passes", Policy{Dirs: []string{filepath.Join(home, ".claude")}}, ""},
		{"a sibling of home with its prefix passes", Policy{Dirs: []string{home + "2"}}, ""},
		{"device outside /dev", Policy{Devices: []string{"/tmp/null"}}, `sandbox device "/tmp/null": not under /dev`},
		{"/dev itself passes", Policy{Devices: []string{"/dev"}}, ""},
		{"/devices is not /dev", Policy{Devices: []string{"/devices/null"}}, "not under /dev"},
		{"namespaces", Policy{Dirs: []string{stmp}, Net: &Namespaces{ProxyPort: 3128, LoopbackPorts: []int{11434}, Tmp: stmp, Keep: []string{tmp}, Hide: []string{"/run/user/0"}}}, ""},
		{"tmp not writable", Policy{Dirs: []string{filepath.Dir(stmp)}, Net: &Namespaces{Tmp: stmp}}, `sandbox tmp "` + stmp + `": not among the writable directories`},
		{"empty namespaces", Policy{Net: &Namespaces{}}, ""},
		{"port 0", Policy{Net: &Namespaces{LoopbackPorts: []int{0}}}, "sandbox namespaces: port 0: want 1 to 65535"},
		{"port too high", Policy{Net: &Namespaces{ProxyPort: 65536}}, "port 65536: want 1 to 65535"},
		{"port twice", Policy{Net: &Namespaces{ProxyPort: 8080, LoopbackPorts: []int{8080}}}, "port 8080 named twice"},
		{"relative tmp", Policy{Dirs: []string{"tmp"}, Net: &Namespaces{Tmp: "tmp"}}, `sandbox tmp "tmp": not an absolute path`},
		{"hiding the root", Policy{Net: &Namespaces{Hide: []string{"/"}}}, `sandbox hidden path "/": the root directory`},
		{"keep not clean", Policy{Net: &Namespaces{Keep: []string{"/tmp/a/"}}}, `sandbox kept path "/tmp/a/": not a clean path`},
		{"overlay", Policy{Dirs: []string{ov.Target, stmp}, Net: &Namespaces{Tmp: stmp, Overlay: &ov}}, ""},
		{"overlay target not writable", Policy{Dirs: []string{stmp}, Net: &Namespaces{Overlay: &ov}}, `sandbox overlay target "` + ov.Target + `": not among the writable directories`},
		{"overlay upper writable", Policy{Dirs: []string{ov.Target, ov.Upper}, Net: &Namespaces{Overlay: &ov}}, "the overlay's layer"},
		{"overlay session writable", Policy{Dirs: []string{ov.Target, filepath.Dir(ov.Upper)}, Net: &Namespaces{Overlay: &ov}}, "the overlay's layer"},
		{"overlay lower writable below", Policy{Dirs: []string{ov.Target, filepath.Join(ov.Lower, "src")}, Net: &Namespaces{Overlay: &ov}}, "the overlay's layer"},
		{"overlay lower file writable", Policy{Dirs: []string{ov.Target}, Files: []string{filepath.Join(ov.Lower, "go.mod")}, Net: &Namespaces{Overlay: &ov}}, "in the overlay's layer"},
		{"overlay target in lower", Policy{Dirs: []string{ov.Lower + "/t"}, Net: &Namespaces{Overlay: &Overlay{Lower: ov.Lower, Upper: ov.Upper, Work: ov.Work, Target: ov.Lower + "/t"}}}, "overlap"},
		{"overlay relative lower", Policy{Dirs: []string{ov.Target}, Net: &Namespaces{Overlay: &Overlay{Lower: "project", Upper: ov.Upper, Work: ov.Work, Target: ov.Target}}}, `sandbox overlay lower "project": not an absolute path`},
		{"overlay whiteout above the tree", Policy{Dirs: []string{ov.Target}, Net: &Namespaces{Overlay: &Overlay{Lower: ov.Lower, Upper: ov.Upper, Work: ov.Work, Target: ov.Target, Whiteouts: []string{"../x"}}}}, `whiteout "../x"`},
		{"overlay whiteout absolute", Policy{Dirs: []string{ov.Target}, Net: &Namespaces{Overlay: &Overlay{Lower: ov.Lower, Upper: ov.Upper, Work: ov.Work, Target: ov.Target, Whiteouts: []string{"/etc"}}}}, `whiteout "/etc"`},
		{"overlay whiteouts", Policy{Dirs: []string{ov.Target}, Net: &Namespaces{Overlay: &Overlay{Lower: ov.Lower, Upper: ov.Upper, Work: ov.Work, Target: ov.Target, Whiteouts: []string{".env", "a/..b"}}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Check()
			if tc.err == "" && err != nil || tc.err != "" && !strings.Contains(errText(err), tc.err) {
				t.Errorf("Check(%+v) = %v, want %q", tc.p, err, tc.err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FuzzDecodeMessage checks that what the launcher accepts as its message
// encodes back to a message it reads the same, and that nothing makes it
// panic.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"v":4,"policy":{"dirs":["/tmp/t"],"files":["/home/u/.claude.json"],"devices":["/dev/null","/dev/pts"]},"status_fd":4,"files":1,"abi":7,"env":["UEFUSD0vYmlu","/w=="]}`,
		`{"v":4,"policy":{}}`,
		`{"v":4,"policy":{"dirs":["/"]}}`,
		`{"v":1,"policy":{}}`,
		`{"v":4,"policy":{},"status_fd":2}`,
		`{"v":4,"policy":{},"files":-1}`,
		`{"v":4,"policy":{},"abi":-1}`,
		`{"v":4,"policy":{},"env":["not base64"]}`,
		`{"v":4,"policy":{"net":[443]}}`,
		`{"v":4,"policy":{},"parent_death":15,"parent":1}`,
		`{"v":4,"policy":{},"parent_death":15}`,
		`{"v":4,"policy":{}} {}`,
		`{"v":4,"policy":{"dirs":null},"env":null}`,
		`{"v":4,"policy":{"dirs":["a\u0000b"]}}`,
		`{"v":4,"policy":{"namespaces":{"proxy_port":3128,"loopback_ports":[11434],"tmp":"/s/tmp","keep":["/tmp/p"],"hide":["/run/user/0"]}},"sock_fd":6}`,
		`{"v":4,"policy":{"namespaces":{}},"sock_fd":6}`,
		`{"v":4,"policy":{"namespaces":{}}}`,
		`{"v":4,"policy":{},"sock_fd":6}`,
		`{"v":4,"policy":{"namespaces":{}},"sock_fd":2}`,
		``, `null`, `[]`, `{`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := decodeMessage([]byte(s))
		if err != nil {
			return
		}
		if m.V != messageVersion || m.StatusFD < 0 || m.StatusFD > 0 && m.StatusFD < 3 || m.Files < 0 || m.ABI < 0 ||
			(m.Policy.Net != nil) != (m.Sock >= 3) {
			t.Fatalf("decodeMessage(%q) accepted %+v", s, m)
		}
		_ = m.Policy.Check()
		enc, err := encodeMessage(m)
		if err != nil {
			t.Fatalf("encodeMessage(%+v): %v", m, err)
		}
		back, err := decodeMessage(enc)
		if err != nil {
			t.Fatalf("decodeMessage(encodeMessage(%+v)) = %v", m, err)
		}
		if !reflect.DeepEqual(norm(back), norm(m)) {
			t.Fatalf("round trip of %q: %+v, then %+v", s, m, back)
		}
	})
}

// norm makes empty lists nil, which JSON does not tell apart.
func norm(m message) message {
	for _, l := range []*[]string{&m.Policy.Dirs, &m.Policy.Files, &m.Policy.Devices} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	if len(m.Env) == 0 {
		m.Env = nil
	}
	if n := m.Policy.Net; n != nil {
		c := *n
		for _, l := range []*[]string{&c.Keep, &c.Hide} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		if len(c.LoopbackPorts) == 0 {
			c.LoopbackPorts = nil
		}
		m.Policy.Net = &c
	}
	for i, kv := range m.Env {
		if len(kv) == 0 {
			m.Env[i] = nil
		}
	}
	return m
}

// TestImports holds the package to the standard library, x/sys,
// x/net/bpf (the seccomp filter's assembler, standard library only),
// go-landlock, and two leaves held to the same: internal/pathutil (its
// symlink resolver) and internal/buildinfo (what says two binaries are of
// one build). The launcher is in every confined start, before main.
func TestImports(t *testing.T) {
	const w = "github.com/seed-3bc194a6/workforce/"
	leaves := map[string]string{".": "confine", "../internal/pathutil": "internal/pathutil", "../internal/buildinfo": "internal/buildinfo"}
	for dir, name := range leaves {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pkg.Imports {
			first, _, _ := strings.Cut(imp, "/")
			switch {
			case !strings.Contains(first, "."):
			case strings.HasPrefix(imp, "golang.org/x/sys/"), strings.HasPrefix(imp, "github.com/landlock-lsm/go-landlock/"),
				imp == "golang.org/x/net/bpf":
			case dir == "." && (imp == w+"internal/pathutil" || imp == w+"internal/buildinfo"):
			default:
				t.Errorf("%s imports %s: it may import the standard library, golang.org/x/sys, golang.org/x/net/bpf, go-landlock, internal/pathutil and internal/buildinfo only", name, imp)
			}
		}
	}
}

// TestCovered checks which paths the harness's namespaces cover with
// directories of their own.
func TestCovered(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/tmp/home/sessions/x", true},
		{"/dev/shm/home", true},
		{"/tmp", false}, // the directory itself is the harness's own
		{"/dev/shm", false},
		{"/tmpfile", false},
		{"/dev/shmx/a", false},
		{"/dev/null", false},
		{"/home/user/project", false},
	} {
		if got := Covered(tc.path); got != tc.want {
			t.Errorf("Covered(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
