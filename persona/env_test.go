package persona

import (
	"slices"
	"testing"
)

func TestLoaderVariable(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"LD_PRELOAD", true},
		{"LD_LIBRARY_PATH", true},
		{"LD_AUDIT", true},
		{"LD_BIND_NOW", true},
		{"LD_", true},
		{"GCONV_PATH", true},
		{"GETCONF_DIR", true},
		{"GLIBC_TUNABLES", true},
		{"HOSTALIASES", true},
		{"LOCALDOMAIN", true},
		{"LOCPATH", true},
		{"MALLOC_TRACE", true},
		{"NIS_PATH", true},
		{"NLSPATH", true},
		{"RESOLV_HOST_CONF", true},
		{"RES_OPTIONS", true},
		{"TZDIR", true},
		// Allowed: where files go, allocator tuning, other cases and
		// names that merely contain a loader variable's.
		{"TMPDIR", false},
		{"MALLOC_ARENA_MAX", false},
		{"ld_preload", false},
		{"OLD_PRELOAD", false},
		{"GCONV_PATHS", false},
		{"TOKEN", false},
		{"", false},
	} {
		if got := LoaderVariable(tc.name); got != tc.want {
			t.Errorf("LoaderVariable(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestEnvRefusals checks that the refusal of a loader variable is found
// for the id the file was meant to be, by its name or its id member, in
// any layer, and not for another id.
func TestEnvRefusals(t *testing.T) {
	cat, root := loadTree(t, `
-- user/editor.json --
{"id": "editor", "intent": "i", "description": "d", "harness": "claude", "model": "m"}
-- project/editor.json --
{"id": "editor", "env": {"LD_PRELOAD": "x.so"}}
-- project/renamed.json --
{"id": "spy", "intent": "i", "description": "d", "harness": "claude", "model": "m", "env": {"NLSPATH": "x"}}
-- project/other.json --
{"id": "other", "intent": "i", "description": "d", "harness": "claude", "model": "m", "claudeMd": "../x.md"}
`)
	if p, ok := cat.Get("editor"); !ok || p.Layer != "user" {
		t.Fatalf("editor = %+v, %v: want the user's, the project's refused", p, ok)
	}
	for id, want := range map[string][]string{
		"editor": {"project/editor.json:1:26: env.LD_PRELOAD: a persona may not set LD_PRELOAD: it changes what code the harness's programs load, or what their C library trusts"},
		"spy":    {"project/renamed.json:1:93: env.NLSPATH: a persona may not set NLSPATH: it changes what code the harness's programs load, or what their C library trusts"},
		"other":  nil,
		"nobody": nil,
	} {
		if got := diagStrings(cat.EnvRefusals(id), root); !slices.Equal(got, want) {
			t.Errorf("EnvRefusals(%q) = %q, want %q", id, got, want)
		}
	}
}
