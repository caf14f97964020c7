package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"installed as a module", "v1.4.0", vcs("vcs.revision", "3690568c0d1e44aa"), "v1.4.0"},
		{"a pseudo-version", "v0.0.0-20261128235502-3690568c0d1e", nil, "v0.0.0-20261128235502-3690568c0d1e"},
		{"built in a clone", "(devel)", vcs("vcs", "git", "vcs.revision", "3690568c0d1e44aabbccddeeff00112233445566", "vcs.time", "2026-11-28T23:55:02Z", "vcs.modified", "false"),
			"dev 3690568c0d1e (2026-11-28T23:55:02Z)"},
		{"with changes", "(devel)", vcs("vcs.revision", "3690568c0d1e44aa", "vcs.modified", "true"), "dev 3690568c0d1e (modified)"},
		{"nothing stamped", "(devel)", nil, "dev"},
		{"no version at all", "", nil, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "m", Version: tt.version}, Settings: tt.settings}
			if got := Describe(bi); got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVersionSetWins(t *testing.T) {
	if got := Version("v2.0.0"); got != "v2.0.0" {
		t.Errorf("Version(v2.0.0) = %q", got)
	}
	if got := Version("dev"); got == "" {
		t.Error("Version(dev) is empty")
	}
}
