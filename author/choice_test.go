package author

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestChoice: the choice given wins, then "create": {"saveIn"} of
// config.json, then cwd; a config.json that cannot be read is an error.
func TestChoice(t *testing.T) {
	tests := []struct {
		name, config, given string
		want                string
		fromConfig, wantErr bool
	}{
		{"nothing", "", "", "cwd", false, false},
		{"given", `{"create": {"saveIn": "user"}}`, "dir:2", "dir:2", false, false},
		{"configured", `{"create": {"saveIn": "user"}}`, "", "user", true, false},
		{"configured empty", `{"create": {}}`, "", "cwd", false, false},
		{"a bad config", `{"create": `, "", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, fromConfig, err := Choice(home, tt.given)
			if got != tt.want || fromConfig != tt.fromConfig || (err != nil) != tt.wantErr {
				t.Errorf("Choice = %q, %v, %v; want %q, %v, an error: %v", got, fromConfig, err, tt.want, tt.fromConfig, tt.wantErr)
			}
		})
	}
}

// TestRef: the persona author on the tier given, or on its default.
func TestRef(t *testing.T) {
	for tier, want := range map[string]string{"": "persona-author", "best": "persona-author@best"} {
		if got := Ref(tier); got != want {
			t.Errorf("Ref(%q) = %q, want %q", tier, got, want)
		}
	}
}

// TestRefused: create's warning counts the actions refused, one or many.
func TestRefused(t *testing.T) {
	for n, want := range map[int]string{
		1: "the persona author was refused 1 action; what it wrote is checked all the same",
		3: "the persona author was refused 3 actions; what it wrote is checked all the same",
	} {
		if got := Refused(n); got != want {
			t.Errorf("Refused(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestWritePackage: the staging directory's package.json names its
// personas/ directory, where the agent writes, as the pack's personas,
// and is private (never published).
func TestWritePackage(t *testing.T) {
	stage, err := NewStage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePackage(stage); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(stage, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pj struct {
		Name           string `json:"name"`
		Private        bool   `json:"private"`
		AgentWorkforce struct {
			Personas string `json:"personas"`
		} `json:"agentworkforce"`
	}
	if err := json.Unmarshal(data, &pj); err != nil {
		t.Fatalf("package.json: %v\n%s", err, data)
	}
	if pj.Name == "" || !pj.Private {
		t.Errorf("package.json: name %q, private %v; want a name, private", pj.Name, pj.Private)
	}
	if fi, err := os.Stat(filepath.Join(stage, pj.AgentWorkforce.Personas)); pj.AgentWorkforce.Personas == "" || err != nil || !fi.IsDir() {
		t.Errorf("package.json's personas %q is not the staging directory's personas/ (%v)", pj.AgentWorkforce.Personas, err)
	}
}
