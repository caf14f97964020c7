package native

import (
	"fmt"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Formats are the harnesses whose agent files workforce reads and
// writes. Gemini CLI's subagents (.gemini/agents) are not among them yet.
var Formats = []string{persona.HarnessClaude, persona.HarnessOpencode, persona.HarnessCodex}

// File is an agent file to write.
type File struct {
	// Name is the file's name: <agent>.md or <agent>.toml.
	Name    string
	Harness string
	Agent   string
	Data    []byte
	// Dropped are the persona values the file cannot say.
	Dropped []Dropped
}

// Export writes persona r (resolved for a tier; description is the
// persona's) as an agent file of harness h named name.
func Export(description string, r *persona.Resolved, h, name string) (*File, error) {
	a := &Agent{
		Harness: h, Name: name, Description: description, Model: r.Model, Prompt: r.SystemPrompt,
		Permissions: r.Permissions, MCPServers: r.MCPServers, Rest: r.Native.For(h),
	}
	if a.Model == "" {
		a.Model = ModelInherit
	}
	var dropped []Dropped
	drop := func(field, value, why string) { dropped = append(dropped, Dropped{field, value, why}) }
	if r.Harness != h && a.Model != ModelInherit {
		drop("model", a.Model, fmt.Sprintf("tier %s runs on %s; the agent runs on %s's own default model", r.Tier, r.Harness, h))
		a.Model = ModelInherit
	}
	if other := persona.ChannelFor(persona.HarnessClaude); h != persona.HarnessClaude {
		if sc := r.Sidecar(other); sc.IsSet() && !r.Sidecar(persona.ChannelFor(h)).IsSet() {
			drop(string(other), "", h+" reads AGENTS.md; the file carries the agentsMd sidecar only")
		}
	} else if sc := r.Sidecar(persona.ChannelAgents); sc.IsSet() && !r.Sidecar(persona.ChannelClaude).IsSet() {
		drop(string(persona.ChannelAgents), "", "claude reads CLAUDE.md; the file carries the claudeMd sidecar only")
	}
	if sc := r.Sidecar(persona.ChannelFor(h)); sc.IsSet() {
		text, err := sc.Text()
		if err != nil {
			return nil, err
		}
		a.Sidecar = &Sidecar{Channel: sc.Channel, Mode: sc.Mode, Text: text}
	}
	hs := r.HarnessSettings
	a.Settings.Reasoning = hs.Reasoning
	if h == persona.HarnessCodex {
		a.Settings.SandboxMode, a.Settings.ApprovalPolicy = hs.SandboxMode, hs.ApprovalPolicy
		a.Settings.WorkspaceWriteNetworkAccess = hs.WorkspaceWriteNetworkAccess
	} else {
		for _, x := range []struct{ field, v string }{{"harnessSettings.sandboxMode", hs.SandboxMode}, {"harnessSettings.approvalPolicy", hs.ApprovalPolicy}} {
			if x.v != "" {
				drop(x.field, x.v, "codex's own setting")
			}
		}
		if v := hs.WorkspaceWriteNetworkAccess; v != nil {
			drop("harnessSettings.workspaceWriteNetworkAccess", fmt.Sprint(*v), "codex's own setting")
		}
	}
	if v := hs.WebSearch; v != nil {
		drop("harnessSettings.webSearch", fmt.Sprint(*v), "an agent file has no such key")
	}
	if v := hs.DangerouslyBypassApprovalsAndSandbox; v != nil {
		drop("harnessSettings.dangerouslyBypassApprovalsAndSandbox", fmt.Sprint(*v), "an agent file has no such key")
	}
	if t := hs.TimeoutSeconds; t > 0 {
		drop("harnessSettings.timeoutSeconds", fmt.Sprint(t), "an agent file has no time limit")
	}
	for _, k := range sortedKeys(r.Inputs) {
		drop("inputs."+k, "", "workforce run substitutes inputs; the file keeps $"+k+" as written")
	}
	for _, k := range sortedKeys(r.Env) {
		drop("env."+k, "", "an agent file sets no environment")
	}
	for _, s := range r.Skills {
		if h != persona.HarnessClaude {
			drop("skills", s.ID, h+"'s agent files name no skills")
		}
	}
	if len(r.Mount.IgnoredPatterns) > 0 || len(r.Mount.ReadonlyPatterns) > 0 || r.Mount.Enabled != nil {
		drop("mount", "", "the sandbox is workforce run's; an agent file runs where its harness runs")
	}
	f := &File{Harness: h, Agent: name}
	var err error
	switch h {
	case persona.HarnessClaude:
		f.Name = name + ".md"
		var more []Dropped
		f.Data, more, err = FormatClaude(a, r.Skills)
		dropped = append(dropped, more...)
	case persona.HarnessOpencode:
		f.Name = name + ".md"
		if len(a.MCPServers) > 0 {
			for _, n := range sortedKeys(a.MCPServers) {
				drop("mcpServers", n, "opencode's MCP servers are its config's, not an agent's")
			}
			a.MCPServers = nil
		}
		var more []Dropped
		f.Data, more, err = FormatOpencode(a)
		dropped = append(dropped, more...)
	case persona.HarnessCodex:
		f.Name = name + ".toml"
		p := a.Permissions
		for _, x := range []struct {
			field string
			rules []string
		}{{"permissions.allow", p.Allow}, {"permissions.deny", p.Deny}} {
			for _, rule := range x.rules {
				drop(x.field, rule, "a codex agent file has no permission rules (harnessSettings.sandboxMode read-only keeps it from editing)")
			}
		}
		if p.Mode != "" {
			drop("permissions.mode", p.Mode, "a codex agent file has no permission mode (harnessSettings.approvalPolicy is codex's)")
		}
		f.Data, err = FormatCodex(a)
	default:
		return nil, fmt.Errorf("%s has no agent file format workforce writes; want one of %s", h, strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, err
	}
	f.Dropped = dropped
	return f, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
