package harness

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Claude Code takes everything through flags. Measured on 2.1.330 and
// 2.1.332 with
// the scripted model of make e2e (e2e/mapping_test.go):
//
//   - --disallowedTools NAME removes the tool NAME, and only it, from the
//     tools the model is offered: with Edit denied, Write is still offered
//     and a Write call succeeds; a path rule, Edit(out.txt), stops Write to
//     that path too. Permission rules are Claude Code's own syntax, passed
//     through as written.
//   - --effort low|medium|high puts output_config.effort in every request
//     (medium when not given) for the models that take an effort
//     (claude-opus-4-5, claude-sonnet-4-6, claude-opus-5-5); it also takes
//     xhigh and max. For claude-opus-4-1, claude-sonnet-4-5 and
//     claude-haiku-4-5 it sends no effort and ignores --effort: those think
//     with a budget, thinking.budget_tokens, 31999 unless
//     MAX_THINKING_TOKENS says otherwise.
//   - --permission-mode lists acceptEdits, auto, bypassPermissions, manual,
//     dontAsk and plan, and takes default too.
//   - --model claude-opus-4-1 requests claude-opus-5-5: a retired model is
//     remapped to the latest of its family, with a warning, unless
//     CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP=1.
//   - --session-id UUID fixes the id of the conversation a run starts,
//     interactive or -p (e2e/oneshot_test.go: the -p result's session_id
//     is the one given), and `claude -p --resume ID` continues it in the
//     same working directory: Options.SessionID.
//   - Its own sandbox (settings sandbox.enabled: bubblewrap on Linux)
//     cannot start inside workforce's write sandbox (Landlock: no user
//     namespace mapping, no mounts; docs/sandbox.md). Confined
//     (Options.Confined), it gets --settings with sandbox.enabled false,
//     a layer above the user's and the project's settings files (a JSON
//     string is taken; with the user's sandbox.enabled and
//     failIfUnavailable true it refuses to start without bubblewrap, and
//     with the flag it starts), and workforce's sandbox bounds its
//     writes instead.
const claudeMeasured = "2.1.332"

// claudeNoSandbox turns Claude Code's own sandbox off (--settings takes a
// file or a JSON string).
const claudeNoSandbox = `{"sandbox":{"enabled":false}}`

// claudeNoRemap keeps Claude Code on the persona's model.
const claudeNoRemap = "CLAUDE_CODE_DISABLE_LEGACY_MODEL_REMAP=1"

// claudeEfforts maps harnessSettings.reasoning to --effort.
var claudeEfforts = map[string]string{"low": "low", "medium": "medium", "high": "high"}

// claudeBudgetModels are the models Claude Code sends no effort for: how
// hard they think is their thinking budget, MAX_THINKING_TOKENS.
var claudeBudgetModels = []string{"claude-opus-4-1", "claude-sonnet-4-5", "claude-haiku-4-5"}

// claudeBudgets maps harnessSettings.reasoning to a thinking budget:
// Claude Code's own levels (think, megathink, ultrathink).
var claudeBudgets = map[string]int{"low": 4000, "medium": 10000, "high": 31999}

// claudeModes maps permissions.mode to --permission-mode: Claude Code's
// own modes, the persona's vocabulary.
var claudeModes = map[string]string{
	"default": "default", "acceptEdits": "acceptEdits", "plan": "plan",
	"dontAsk": "dontAsk", "bypassPermissions": "bypassPermissions",
}

func planClaude(inv *Invocation, r *persona.Resolved, o Options, m *Mapping, lookup func(string) string) error {
	// Claude Code names models without a provider.
	model := strings.TrimPrefix(r.Model, "anthropic/")
	if model == persona.ModelInherit {
		inv.Args = []string{}
		m.apply(FieldModel, r.Model, "no --model: claude's own default model")
	} else {
		inv.Args = []string{"--model", model}
		how := "--model " + model
		if _, set := r.Env[strings.TrimSuffix(claudeNoRemap, "=1")]; !set {
			inv.SetEnv = append(inv.SetEnv, claudeNoRemap)
			how += " and " + claudeNoRemap + " (else a retired model is remapped to the latest of its family)"
		}
		m.apply(FieldModel, r.Model, how)
	}
	if r.SystemPrompt != "" {
		inv.Args = append(inv.Args, "--append-system-prompt", r.SystemPrompt)
	}
	if mode := r.Permissions.Mode; mode != "" {
		if v, ok := claudeModes[mode]; ok {
			inv.Args = append(inv.Args, "--permission-mode", v)
			m.apply(FieldMode, mode, "--permission-mode "+v)
		} else {
			m.refuse(FieldMode, mode, "claude has no such permission mode")
		}
	}
	allow, deny := parseRules(r.Permissions)
	for _, list := range []struct {
		flag    string
		entries []ruleEntry
	}{{"--allowedTools", allow}, {"--disallowedTools", deny}} {
		var rules []string
		for _, e := range refuseBadRules(m, list.entries) {
			rules = append(rules, e.rule.String())
			m.apply(e.field, e.raw, list.flag+" "+e.rule.String())
		}
		if len(rules) > 0 {
			inv.Args = append(inv.Args, list.flag, strings.Join(rules, ","))
		}
	}
	if v := r.HarnessSettings.Reasoning; v != "" {
		e, ok := claudeEfforts[v]
		budgeted := false
		for _, p := range claudeBudgetModels {
			budgeted = budgeted || model == p || strings.HasPrefix(model, p+"-")
		}
		switch {
		case !ok:
			m.refuse(FieldReasoning, v, "claude's --effort takes low, medium, high, xhigh or max")
		case budgeted:
			if _, set := r.Env["MAX_THINKING_TOKENS"]; set {
				m.refuse(FieldReasoning, v, "the persona's env sets MAX_THINKING_TOKENS, the thinking budget of "+model)
				break
			}
			kv := fmt.Sprintf("MAX_THINKING_TOKENS=%d", claudeBudgets[v])
			inv.SetEnv = append(inv.SetEnv, kv)
			m.apply(FieldReasoning, v, kv+" ("+model+" takes no effort but a thinking budget: low 4000, medium 10000, high 31999 tokens)")
		default:
			inv.Args = append(inv.Args, "--effort", e)
			m.apply(FieldReasoning, v, "--effort "+e)
		}
	}
	if o.SessionID != "" {
		inv.Args = append(inv.Args, "--session-id", o.SessionID)
	}
	if o.Confined {
		inv.Args = append(inv.Args, "--settings", claudeNoSandbox)
		env, _, _ := networkSwitches(persona.HarnessClaude)
		inv.SetEnv = append(inv.SetEnv, env...)
		m.apply(FieldWriteSandbox, "on", "--settings "+claudeNoSandbox+": claude's own sandbox (bubblewrap) cannot start inside Landlock; workforce's lets it write the tree and the session's tmp; "+
			strings.Join(env, " ")+" (no traffic but its model's)")
	}
	if len(r.MCPServers) > 0 {
		servers := expandMCP(r.MCPServers, lookup)
		b, err := json.Marshal(map[string]any{"mcpServers": servers})
		if err != nil {
			return err
		}
		inv.Args = append(inv.Args, "--mcp-config", string(b), "--strict-mcp-config")
		for _, n := range mcpNames(servers) {
			m.apply(FieldMCP, n, "--mcp-config (type "+servers[n].Type+") with --strict-mcp-config")
		}
	}
	return nil
}
