package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The actions that show what a harness takes of its API keys and base
// URLs, for the tests of the keys workforce brokers:
//
//	baseurl NAME PROVIDER  set NAME to the base URL the harness it is
//	                       named after takes for PROVIDER (anthropic,
//	                       openai, google), as the real one does: claude
//	                       env.ANTHROPIC_BASE_URL of
//	                       $CLAUDE_CONFIG_DIR/settings.json, else
//	                       $ANTHROPIC_BASE_URL; codex its last
//	                       -c openai_base_url="URL" argument; opencode
//	                       provider.PROVIDER.options.baseURL of its merged
//	                       configuration (opencode.go); gemini
//	                       $GOOGLE_GEMINI_BASE_URL
//	jsonget NAME FILE PATH set NAME to the string at PATH (keys joined by
//	                       dots) in the JSON object FILE, "" when there is
//	                       none
//	scanfiles VALUE DIR... look for VALUE in every regular file below
//	                       each DIR, and record in $LOG/files "VALUE:
//	                       found in PATH" for each, then "VALUE: N files
//	                       read"
func brokerAct(dir, verb, rest string) error {
	words := strings.Fields(rest)
	switch verb {
	case "baseurl":
		if len(words) != 2 {
			return errors.New("usage: baseurl NAME PROVIDER")
		}
		return os.Setenv(words[0], baseURL(dir, words[1]))
	case "jsonget":
		if len(words) != 3 {
			return errors.New("usage: jsonget NAME FILE PATH")
		}
		data, err := os.ReadFile(words[1])
		if err != nil {
			return err
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %v", words[1], err)
		}
		for _, k := range strings.Split(words[2], ".") {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		s, _ := v.(string)
		return os.Setenv(words[0], s)
	case "scanfiles":
		if len(words) < 2 {
			return errors.New("usage: scanfiles VALUE DIR [DIR]")
		}
		log := filepath.Join(os.Getenv("LOG"), "files")
		read := 0
		for _, d := range words[1:] {
			err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.Type().IsRegular() {
					return nil
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return nil
				}
				read++
				if strings.Contains(string(data), words[0]) {
					return appendLine(log, words[0]+": found in "+p)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return appendLine(log, fmt.Sprintf("%s: %d files read", words[0], read))
	}
	return fmt.Errorf("unknown action %s", verb)
}

// baseURL is the base URL the harness this stand-in is named after takes
// for provider.
func baseURL(dir, provider string) string {
	switch filepath.Base(os.Args[0]) {
	case "claude":
		var s struct {
			Env map[string]string `json:"env"`
		}
		if data, err := os.ReadFile(filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "settings.json")); err == nil && json.Unmarshal(data, &s) == nil {
			if u := s.Env["ANTHROPIC_BASE_URL"]; u != "" {
				return u
			}
		}
		return os.Getenv("ANTHROPIC_BASE_URL")
	case "codex":
		u := ""
		for i, a := range os.Args {
			if v, ok := strings.CutPrefix(a, "openai_base_url="); ok && i > 0 && os.Args[i-1] == "-c" {
				if uq, err := strconv.Unquote(v); err == nil {
					v = uq
				}
				u = v
			}
		}
		return u
	case "opencode":
		providers, _ := opencodeConfig(dir)["provider"].(map[string]any)
		p, _ := providers[provider].(map[string]any)
		opts, _ := p["options"].(map[string]any)
		u, _ := opts["baseURL"].(string)
		return u
	case "gemini":
		return os.Getenv("GOOGLE_GEMINI_BASE_URL")
	}
	return ""
}
