package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/tailscale/hujson"
)

// opencodeAgent returns the agent opencode would run for --agent NAME in
// args, merged from its configuration sources in the order opencode
// 1.18.33 ranks them (written here apart from workforce's own table,
// harness.OpencodeRanking, so that a change there is checked against
// it), lowest first:
//
//	the file $OPENCODE_CONFIG names
//	opencode.jsonc and opencode.json, from dir up to the worktree (the
//	  directory holding .git; dir alone without one), the farthest first
//	.opencode/opencode.json and .opencode/opencode.jsonc there
//	$OPENCODE_CONFIG_CONTENT
//	mode.NAME of the merged configuration, over agent.NAME
//
// Objects merge key by key, a later source's value winning. It returns
// nil when no agent NAME is asked for or none is defined.
func opencodeAgent(dir string, args []string) map[string]any {
	name := ""
	for i, a := range args {
		if a == "--agent" && i+1 < len(args) {
			name = args[i+1]
		}
	}
	if name == "" {
		return nil
	}
	cfg := opencodeConfig(dir)
	agents, _ := cfg["agent"].(map[string]any)
	agent, _ := agents[name].(map[string]any)
	if modes, ok := cfg["mode"].(map[string]any); ok {
		if m, ok := modes[name].(map[string]any); ok {
			agent = mergeDeep(agent, m)
		}
	}
	return agent
}

// opencodeConfig returns opencode's configuration merged from the
// sources opencodeAgent names, in its order, for dir.
func opencodeConfig(dir string) map[string]any {
	cfg := map[string]any{}
	add := func(data []byte) {
		std, err := hujson.Standardize(data)
		if err != nil {
			fail("opencode configuration: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(std, &m); err != nil {
			fail("opencode configuration: %v", err)
		}
		cfg = mergeDeep(cfg, m)
	}
	file := func(path string) {
		if data, err := os.ReadFile(path); err == nil {
			add(data)
		}
	}
	if p := os.Getenv("OPENCODE_CONFIG"); p != "" {
		file(p)
	}
	levels := []string{dir}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		up := filepath.Dir(d)
		if up == d {
			levels = []string{dir}
			break
		}
		d = up
		levels = append(levels, d)
	}
	for i := len(levels) - 1; i >= 0; i-- {
		file(filepath.Join(levels[i], "opencode.jsonc"))
		file(filepath.Join(levels[i], "opencode.json"))
	}
	for _, d := range levels {
		file(filepath.Join(d, ".opencode", "opencode.json"))
		file(filepath.Join(d, ".opencode", "opencode.jsonc"))
	}
	if c := os.Getenv("OPENCODE_CONFIG_CONTENT"); c != "" {
		add([]byte(c))
	}
	return cfg
}

// mergeDeep merges src over dst as opencode does: objects key by key,
// anything else replaced.
func mergeDeep(dst, src map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		a, aok := out[k].(map[string]any)
		b, bok := v.(map[string]any)
		if aok && bok {
			out[k] = mergeDeep(a, b)
			continue
		}
		out[k] = v
	}
	return out
}
