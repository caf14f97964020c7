package native

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// seed adds the testdata files of harness h to f.
func seed(f *testing.F, h string) {
	files, _ := filepath.Glob(filepath.Join("testdata", h, "*"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// sameAgent reports whether two agents say the same, their native blocks
// compared as JSON values in order.
func sameAgent(t *testing.T, a, b *Agent) {
	t.Helper()
	ra, rb := a.Rest, b.Rest
	x, y := *a, *b
	x.Rest, y.Rest = nil, nil
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("written and read again:\n%+v\nwant\n%+v", y, x)
	}
	var ca, cb bytes.Buffer
	json.Compact(&ca, ra)
	json.Compact(&cb, rb)
	if ca.String() != cb.String() {
		t.Fatalf("native block written and read again: %s, want %s", cb.String(), ca.String())
	}
}

// FuzzClaude: the reader never panics, and a file it accepts, written
// again, reads back the same.
func FuzzClaude(f *testing.F) {
	seed(f, "claude")
	f.Add([]byte("---\nname: a\ndescription: b\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: b\nmcpServers:\n  - x: {command: y}\n---\nbody\n<!-- workforce:claudeMd -->\nside"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseClaude("f.md", data)
		if err != nil {
			return
		}
		out, _, err := FormatClaude(a, nil)
		if err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		b, err := ParseClaude("f.md", out)
		if err != nil {
			t.Fatalf("cannot read what was written: %v\n%s", err, out)
		}
		sameAgent(t, a, b)
	})
}

// FuzzOpencode is FuzzClaude for opencode's agent files.
func FuzzOpencode(f *testing.F) {
	seed(f, "opencode")
	f.Add([]byte("just a prompt"))
	f.Add([]byte("---\npermission:\n  bash:\n    'git *': allow\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseOpencode("f.md", "agent", data)
		if err != nil {
			return
		}
		out, _, err := FormatOpencode(a)
		if err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		b, err := ParseOpencode("f.md", "agent", out)
		if err != nil {
			t.Fatalf("cannot read what was written: %v\n%s", err, out)
		}
		if _, after, ok := strings.Cut(b.Model, "/"); ok && !strings.Contains(a.Model, "/") {
			// Written with the provider opencode needs (harness.OpencodeAgent).
			b.Model = after
		}
		sameAgent(t, a, b)
	})
}

// FuzzCodex is FuzzClaude for codex's agent files.
func FuzzCodex(f *testing.F) {
	seed(f, "codex")
	f.Add([]byte("name = 'a'\ndescription = 'b'\ndeveloper_instructions = 'c'\n[mcp_servers.x]\nurl = 'http://y'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseCodex("f.toml", data)
		if err != nil {
			return
		}
		out, err := FormatCodex(a)
		if err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		b, err := ParseCodex("f.toml", out)
		if err != nil {
			t.Fatalf("cannot read what was written: %v\n%s", err, out)
		}
		sameAgent(t, a, b)
	})
}

// FuzzOpencodeConfig: the reader of opencode's configuration files never
// panics, and an agent it accepts, written as an agent file, reads back
// the same.
func FuzzOpencodeConfig(f *testing.F) {
	f.Add([]byte(`{"agent": {"a": {"description": "d", "prompt": "p", "permission": {"edit": "deny"}}}}`))
	f.Add([]byte("{\n// c\n\"agent\": {\"a\": {\"mode\": \"primary\",},},}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, ok, err := ParseOpencodeConfig("opencode.json", "a", data)
		if err != nil || !ok {
			return
		}
		out, _, err := FormatOpencode(a)
		if err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		b, err := ParseOpencode("a.md", "a", out)
		if err != nil {
			t.Fatalf("cannot read what was written: %v\n%s", err, out)
		}
		if _, after, ok := strings.Cut(b.Model, "/"); ok && !strings.Contains(a.Model, "/") {
			b.Model = after
		}
		sameAgent(t, a, b)
	})
}
