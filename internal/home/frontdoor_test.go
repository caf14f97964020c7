package home

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadCreateConfig(t *testing.T) {
	tests := []struct {
		name, file string // file "" for none
		want       string
		err        string
	}{
		{"no file", "", "", ""},
		{"no key", `{"review": true}`, "", ""},
		{"set", `{"create": {"saveIn": "dir:2"}}`, "dir:2", ""},
		{"empty object", `{"create": {}}`, "", ""},
		{"not an object", `{"create": "user"}`, "", `config.json: create: must be an object such as {"saveIn": "user"}`},
		{"unknown key", `{"create": {"saveIn": "user", "into": "x"}}`, "", "create.into: unknown key: create takes saveIn"},
		{"empty value", `{"create": {"saveIn": " "}}`, "", "create.saveIn: must be a string that is not empty"},
		{"a number", `{"create": {"saveIn": 2}}`, "", "create.saveIn: must be a string that is not empty, not 2"},
		{"broken JSON", "{\"create\": {\"saveIn\": \"user\"}", "", "config.json:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				must(t, os.WriteFile(ConfigPath(home), []byte(tt.file), 0o644))
			}
			got, err := ReadCreateConfig(home)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got.SaveIn != tt.want {
				t.Fatalf("got %+v, %v; want saveIn %q", got, err, tt.want)
			}
		})
	}
}

func TestReadPickConfig(t *testing.T) {
	tests := []struct {
		name, file string
		want       PickConfig
		err        string
	}{
		{"no file", "", PickConfig{}, ""},
		{"no key", `{"personaDirs": []}`, PickConfig{}, ""},
		{"all", `{"pick": {"harness": "codex", "model": "gpt-5-mini", "timeout": "90s"}}`, PickConfig{Harness: "codex", Model: "gpt-5-mini", Timeout: 90 * time.Second}, ""},
		{"model only", `{"pick": {"model": "claude-haiku-4-5"}}`, PickConfig{Model: "claude-haiku-4-5"}, ""},
		{"not an object", `{"pick": ["claude"]}`, PickConfig{}, "pick: must be an object"},
		{"unknown key", `{"pick": {"threshold": "low"}}`, PickConfig{}, "pick.threshold: unknown key: pick takes harness, model, timeout"},
		{"empty harness", `{"pick": {"harness": ""}}`, PickConfig{}, "pick.harness: must be a string that is not empty"},
		{"bad timeout", `{"pick": {"timeout": "1 minute"}}`, PickConfig{}, `pick.timeout: "1 minute" is not a duration`},
		{"zero timeout", `{"pick": {"timeout": "0s"}}`, PickConfig{}, "pick.timeout"},
		{"negative timeout", `{"pick": {"timeout": "-5s"}}`, PickConfig{}, "pick.timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				must(t, os.WriteFile(ConfigPath(home), []byte(tt.file), 0o644))
			}
			got, err := ReadPickConfig(home)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestSetCreateSaveIn(t *testing.T) {
	tests := []struct {
		name, before, saveIn, after string
		err                         string
	}{
		{"no file", "", "user", "{\n  \"create\": {\n    \"saveIn\": \"user\"\n  }\n}\n", ""},
		{"an empty object", "{}\n", "cwd", "{\n  \"create\": {\"saveIn\": \"cwd\"}\n}\n", ""},
		{"keys kept, in their order and layout",
			"{\n    \"review\": true,\n    \"personaDirs\": [ \"a\",\n \"b\" ]\n}\n", "dir:2",
			"{\n    \"review\": true,\n    \"personaDirs\": [ \"a\",\n \"b\" ],\n    \"create\": {\"saveIn\": \"dir:2\"}\n}\n", ""},
		{"on one line", `{"review":true}`, "user", `{"review":true, "create": {"saveIn": "user"}}`, ""},
		{"create twice", `{"create": {"saveIn": 1}, "create": {}}`, "cwd", "", "create: appears more than once"},
		{"saveIn twice", `{"create": {"saveIn": "a", "saveIn": "b"}}`, "cwd", "", "create.saveIn: appears more than once"},
		{"replaced", "{\n  \"create\": {\"saveIn\": \"cwd\"},\n  \"z\": 1\n}\n", "/abs/path",
			"{\n  \"create\": {\"saveIn\": \"/abs/path\"},\n  \"z\": 1\n}\n", ""},
		{"beside other keys of create", "{\"create\": {\"x\": 1}}", "user", "{\"create\": {\"x\": 1, \"saveIn\": \"user\"}}", ""},
		{"a value that needs escaping", `{}`, "/p/\"q\"\n", "{\n  \"create\": {\"saveIn\": \"/p/\\\"q\\\"\\n\"}\n}", ""},
		{"create not an object", `{"create": "user"}`, "cwd", "", "create: must be an object"},
		{"not an object", `["create"]`, "cwd", "", "config.json:1:1"},
		{"null", `null`, "cwd", "", "must be a JSON object"},
		{"broken", `{"review": true,}`, "cwd", "", "config.json:1:"},
		{"comments are no JSON", "{// note\n}", "cwd", "", "config.json:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if tt.before != "" {
				must(t, os.MkdirAll(home, 0o755))
				must(t, os.WriteFile(ConfigPath(home), []byte(tt.before), 0o644))
			}
			err := SetCreateSaveIn(home, tt.saveIn)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				if got, _ := os.ReadFile(ConfigPath(home)); string(got) != tt.before {
					t.Errorf("the file was written: %q", got)
				}
				return
			}
			must(t, err)
			got, err := os.ReadFile(ConfigPath(home))
			must(t, err)
			if string(got) != tt.after {
				t.Errorf("config.json =\n%s\nwant\n%s", got, tt.after)
			}
			c, err := ReadCreateConfig(home)
			if tt.name != "beside other keys of create" && (err != nil || c.SaveIn != tt.saveIn) {
				t.Errorf("read back %+v, %v; want saveIn %q", c, err, tt.saveIn)
			}
		})
	}
}

// FuzzWithSaveIn checks that setting create.saveIn in any config file
// either refuses it or gives valid JSON in which create.saveIn is the value
// set and every other key is what it was.
func FuzzWithSaveIn(f *testing.F) {
	for _, s := range []string{``, `{}`, "{\n  \"review\": true\n}\n", `{"create": {"saveIn": "cwd", "x": [1]}}`,
		`{"create": null}`, `{"create": {}}`, `{"a": {"create": 1}}`, `{"create": {"saveIn": 1}, "create": {}}`, ` [] `, `"x"`} {
		f.Add(s, "user")
	}
	f.Add(`{"personaDirs": ["~/p"]}`, "dir:1")
	f.Fuzz(func(t *testing.T, before, saveIn string) {
		out, err := withSaveIn("config.json", []byte(before), saveIn)
		if err != nil {
			return
		}
		var got, was map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q gave %q, not JSON: %v", before, out, err)
		}
		create, ok := got["create"].(map[string]any)
		if !ok || create["saveIn"] != saveIn {
			t.Fatalf("%q, %q gave %q: create is %v", before, saveIn, out, got["create"])
		}
		if len(bytes.TrimSpace([]byte(before))) == 0 {
			return
		}
		if json.Unmarshal([]byte(before), &was) != nil {
			t.Fatalf("%q is no JSON object, and was taken", before)
		}
		delete(got, "create")
		wasCreate, _ := was["create"].(map[string]any)
		delete(was, "create")
		if !reflect.DeepEqual(got, was) {
			t.Fatalf("other keys changed: %v, was %v", got, was)
		}
		delete(create, "saveIn")
		delete(wasCreate, "saveIn")
		if len(create) != len(wasCreate) || (len(create) > 0 && !reflect.DeepEqual(create, wasCreate)) {
			t.Fatalf("other keys of create changed: %v, was %v", create, wasCreate)
		}
	})
}
