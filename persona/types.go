package persona

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// Tier names. A persona defines at least one of them.
const (
	TierBest      = "best"
	TierBestValue = "best-value"
	TierMinimum   = "minimum"
)

// Tiers lists the tier names in order of preference.
var Tiers = []string{TierBest, TierBestValue, TierMinimum}

// Harness names.
const (
	HarnessClaude   = "claude"
	HarnessOpencode = "opencode"
	HarnessCodex    = "codex"
	// HarnessGemini is Gemini CLI (@google/gemini-cli).
	HarnessGemini = "gemini"
	// HarnessGrok is the harness agentworkforce 4.0.2 added. A persona may
	// name it, and it loads, lists and shows, but workforce cannot run it
	// yet: see Runnable.
	HarnessGrok = "grok"
)

// ModelInherit is the model that names none: the harness runs its own
// default model (a native agent file without a model imports as it).
const ModelInherit = "inherit"

// Harnesses lists the harnesses a persona can run on.
var Harnesses = []string{HarnessClaude, HarnessOpencode, HarnessCodex, HarnessGemini}

// KnownHarnesses lists every harness a persona file may name: Harnesses,
// then those workforce parses but cannot run yet.
var KnownHarnesses = []string{HarnessClaude, HarnessOpencode, HarnessCodex, HarnessGemini, HarnessGrok}

// Mode says how a sidecar combines with the repository's own instruction
// files.
type Mode string

// Sidecar modes.
const (
	// ModeOverwrite shows the harness the persona content and none of the
	// repository's instruction files. It is the default.
	ModeOverwrite Mode = "overwrite"
	// ModeExtend shows the harness the instruction text it would have seen
	// anyway, followed by the persona content.
	ModeExtend Mode = "extend"
)

// Channel names a sidecar channel: the CLAUDE.md one or the AGENTS.md one.
type Channel string

// Sidecar channels.
const (
	ChannelClaude Channel = "claudeMd"
	ChannelAgents Channel = "agentsMd"
)

// Channels lists both sidecar channels.
var Channels = []Channel{ChannelClaude, ChannelAgents}

// FileName is the instruction file the channel materializes as.
func (c Channel) FileName() string {
	if c == ChannelClaude {
		return "CLAUDE.md"
	}
	return "AGENTS.md"
}

// ChannelFor returns the sidecar channel the harness reads: claude reads
// CLAUDE.md, opencode and codex read AGENTS.md; gemini takes the AGENTS.md
// channel too, materialized as GEMINI.md (FileNameFor).
func ChannelFor(harness string) Channel {
	if harness == HarnessClaude {
		return ChannelClaude
	}
	return ChannelAgents
}

// FileNameFor is the instruction file the channel materializes as for
// harness h: the channel's, but GEMINI.md for gemini, the one name Gemini
// CLI always reads.
func (c Channel) FileNameFor(h string) string {
	if h == HarnessGemini && c == ChannelAgents {
		return "GEMINI.md"
	}
	return c.FileName()
}

// Sidecars holds the six sidecar fields, at the top level of a spec or in a
// tier. After Load, paths are absolute: each is anchored to the directory of
// the JSON file that declared it.
type Sidecars struct {
	ClaudeMd        string `json:"claudeMd,omitempty"`
	ClaudeMdMode    Mode   `json:"claudeMdMode,omitempty"`
	ClaudeMdContent string `json:"claudeMdContent,omitempty"`
	AgentsMd        string `json:"agentsMd,omitempty"`
	AgentsMdMode    Mode   `json:"agentsMdMode,omitempty"`
	AgentsMdContent string `json:"agentsMdContent,omitempty"`
}

// Fields returns pointers to the path, mode and content fields of channel c.
func (s *Sidecars) Fields(c Channel) (path *string, mode *Mode, content *string) {
	if c == ChannelClaude {
		return &s.ClaudeMd, &s.ClaudeMdMode, &s.ClaudeMdContent
	}
	return &s.AgentsMd, &s.AgentsMdMode, &s.AgentsMdContent
}

// HarnessSettings are harness-level knobs of a tier. Unknown keys are kept
// in Extra and passed through.
type HarnessSettings struct {
	Reasoning      string `json:"reasoning,omitempty"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty"`
	// Codex only.
	SandboxMode                          string `json:"sandboxMode,omitempty"`
	ApprovalPolicy                       string `json:"approvalPolicy,omitempty"`
	WorkspaceWriteNetworkAccess          *bool  `json:"workspaceWriteNetworkAccess,omitempty"`
	WebSearch                            *bool  `json:"webSearch,omitempty"`
	DangerouslyBypassApprovalsAndSandbox *bool  `json:"dangerouslyBypassApprovalsAndSandbox,omitempty"`
}

// Runtime is what a persona runs: harness, model, prompt, settings and
// sidecars. A tier holds one; the top level of a spec holds another, which
// is the runtime of every tier of a flat persona and, next to tiers, the
// default each tier overrides field by field.
type Runtime struct {
	Harness         string           `json:"harness,omitempty"`
	Model           string           `json:"model,omitempty"`
	SystemPrompt    string           `json:"systemPrompt,omitempty"`
	HarnessSettings *HarnessSettings `json:"harnessSettings,omitempty"`
	// Network narrows the run's network policy (config.json and the
	// flags decide it; a persona, which can come from the project, may
	// only narrow it): at the top level for every tier, in a tier for
	// that tier, both applying. Its words are checked when the file is
	// parsed (netspec).
	Network *netspec.Spec `json:"network,omitempty"`
	Sidecars
}

// Skill is an Agent Skill attached to a persona: run installs it into the
// sandbox where the effective harness reads skills. Source says where it
// comes from (ParseSkillSource lists the forms); Files, when set, carries
// the skill inline (SKILL.md and the other files of its directory, by
// slash path), as the generator writes built-in personas' skills, and
// Source then only names where it came from.
type Skill struct {
	ID          string            `json:"id"`
	Source      string            `json:"source"`
	Description string            `json:"description,omitempty"`
	Files       map[string]string `json:"files,omitempty"`
	// Path is, after Load or AnchorSkills, the absolute path of a local
	// source (a .md file or a skill directory); Within is the directory
	// it must stay in through symlinks (the persona's, or the project
	// root's for a path resolved from there); File is the persona file
	// that declared the skill.
	Path   string `json:"-"`
	Within string `json:"-"`
	File   string `json:"-"`
}

// Input is a prompt-visible run input, substituted as $NAME or ${NAME} into
// the system prompt and the sidecar content.
type Input struct {
	Description string `json:"description,omitempty"`
	// Env names the environment variable read when no explicit value is
	// given; it defaults to the input's name.
	Env string `json:"env,omitempty"`
	// Default is used when neither an explicit value nor the environment
	// variable is set.
	Default *string `json:"default,omitempty"`
	// Optional inputs resolve to the empty string instead of failing.
	Optional bool `json:"optional,omitempty"`
	// Picker is agentworkforce's deploy-time picker of the value; it is
	// kept and ignored.
	Picker *InputPicker `json:"picker,omitempty"`
}

// InputPicker is where agentworkforce's deploy command lists the values of
// an input from (an integration's users, channels, teams).
type InputPicker struct {
	Provider string `json:"provider"`
	Resource string `json:"resource"`
}

// UnmarshalJSON accepts an input spec object or a bare string, which is
// its default value.
func (in *Input) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*in = Input{Default: &s}
		return nil
	}
	// Member names match exactly and unknown ones are errors, as in the
	// schema, whichever decoder calls this.
	type plain Input
	return jsonv2.Unmarshal(b, (*plain)(in), jsonv2.RejectUnknownMembers(true))
}

// UnmarshalJSONFrom is UnmarshalJSON for the JSON v2 decoder of Parse's
// fast path, reading the value from the decoder instead of a copy of it.
func (in *Input) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		s := tok.String()
		*in = Input{Default: &s}
		return nil
	}
	type plain Input
	return jsonv2.UnmarshalDecode(dec, (*plain)(in), jsonv2.RejectUnknownMembers(true))
}

// MCPServer is an MCP server definition in the shape of Claude Code's
// --mcp-config, passed through as written.
type MCPServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Permissions is the tool permission policy of a session.
type Permissions struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Mode  string   `json:"mode,omitempty"`
}

// Mount is the sandbox file policy; patterns use gitignore syntax.
type Mount struct {
	// Enabled false runs without a sandbox copy; unset means true.
	Enabled          *bool    `json:"enabled,omitempty"`
	IgnoredPatterns  []string `json:"ignoredPatterns,omitempty"`
	ReadonlyPatterns []string `json:"readonlyPatterns,omitempty"`
	// Tree is how the sandbox shows the project to the harness: "copy",
	// "overlay" or "auto" (run --tree); empty leaves it to the caller.
	Tree string `json:"tree,omitempty"`
}

// CloudFields are the fields agentworkforce 4.0.2 added for its cloud:
// sandbox boot, deployment, integrations, capabilities, memory, relay and
// the event handler. workforce keeps them (show prints them, install copies
// them, a higher layer's value replaces a lower one's) and ignores them;
// a file that sets any is reported once with a warning.
type CloudFields struct {
	Sandbox         *bool           `json:"sandbox,omitempty"`
	Cloud           *bool           `json:"cloud,omitempty"`
	UseSubscription *bool           `json:"useSubscription,omitempty"`
	Integrations    json.RawMessage `json:"integrations,omitempty"`
	Capabilities    json.RawMessage `json:"capabilities,omitempty"`
	Memory          json.RawMessage `json:"memory,omitempty"`
	Relay           json.RawMessage `json:"relay,omitempty"`
	OnEvent         string          `json:"onEvent,omitempty"`
}

// CloudFieldNames are the JSON names of CloudFields, in order.
var CloudFieldNames = []string{"sandbox", "cloud", "useSubscription", "integrations", "capabilities", "memory", "relay", "onEvent"}

// Names returns the JSON names of the fields c sets, in the order of
// CloudFieldNames.
func (c *CloudFields) Names() []string {
	var names []string
	set := []bool{c.Sandbox != nil, c.Cloud != nil, c.UseSubscription != nil, c.Integrations != nil,
		c.Capabilities != nil, c.Memory != nil, c.Relay != nil, c.OnEvent != ""}
	for i, ok := range set {
		if ok {
			names = append(names, CloudFieldNames[i])
		}
	}
	return names
}

// Spec is a persona as written in a JSON file, and, after the cascade, the
// merged persona.
//
// A spec without tiers is flat, the form of agentworkforce 4.0.2: its
// top-level Runtime serves every tier. With tiers, the top-level Runtime
// holds the defaults each tier overrides field by field; see TierRuntime.
type Spec struct {
	Schema  string `json:"$schema,omitempty"`
	ID      string `json:"id"`
	Extends string `json:"extends,omitempty"`
	// Inherit false makes the file take nothing from a lower layer's
	// persona of the same id: it shadows that persona whole, and must be
	// a whole persona itself. Unset means true (Inherits).
	Inherit     *bool                `json:"inherit,omitempty"`
	Intent      string               `json:"intent,omitempty"`
	Tags        []string             `json:"tags,omitempty"`
	Description string               `json:"description,omitempty"`
	Tiers       map[string]*Runtime  `json:"tiers,omitempty"`
	DefaultTier string               `json:"defaultTier,omitempty"`
	Skills      []Skill              `json:"skills,omitempty"`
	Inputs      map[string]Input     `json:"inputs,omitempty"`
	Env         map[string]string    `json:"env,omitempty"`
	MCPServers  map[string]MCPServer `json:"mcpServers,omitempty"`
	Permissions *Permissions         `json:"permissions,omitempty"`
	Mount       *Mount               `json:"mount,omitempty"`
	// Native is what native agent files said that no persona field holds
	// (workforce import, workforce export).
	Native *Native `json:"native,omitempty"`
	// Runtime is the top-level runtime: harness, model, systemPrompt,
	// harnessSettings and the six sidecar fields.
	Runtime
	CloudFields
}

// Native holds, per harness, the keys of a native agent file that have no
// persona field (Claude Code's tools or color, opencode's temperature,
// codex's other config keys), as a JSON object in the file's order:
// workforce import keeps them there and workforce export writes them back,
// so that nothing of the file is lost. workforce run ignores them.
type Native struct {
	Claude   json.RawMessage `json:"claude,omitempty"`
	Opencode json.RawMessage `json:"opencode,omitempty"`
	Codex    json.RawMessage `json:"codex,omitempty"`
}

// For returns the block of harness h, nil when there is none.
func (n *Native) For(h string) json.RawMessage {
	if n == nil {
		return nil
	}
	switch h {
	case HarnessClaude:
		return n.Claude
	case HarnessOpencode:
		return n.Opencode
	case HarnessCodex:
		return n.Codex
	}
	return nil
}

// Inherits reports whether the spec takes what it does not set from a
// lower layer's persona of the same id: Inherit unset or true.
func (s *Spec) Inherits() bool { return s.Inherit == nil || *s.Inherit }

// Flat reports whether the spec has no tiers: its top-level runtime is
// the runtime of every tier.
func (s *Spec) Flat() bool { return len(s.Tiers) == 0 }

// TierNames returns the tiers the spec serves, in the order of Tiers: every
// tier when the top level names both a harness and a model (a flat
// persona, or defaults complete enough to run a tier the spec does not
// name), else the tiers it defines.
func (s *Spec) TierNames() []string {
	if s.Harness != "" && s.Model != "" {
		return slices.Clone(Tiers)
	}
	var names []string
	for _, t := range Tiers {
		if _, ok := s.Tiers[t]; ok {
			names = append(names, t)
		}
	}
	return names
}

// tierHarness and tierModel are TierRuntime(tier).Harness and .Model
// without copying the runtime.
func (s *Spec) tierHarness(tier string) string {
	if rt := s.Tiers[tier]; rt != nil && rt.Harness != "" {
		return rt.Harness
	}
	return s.Harness
}

func (s *Spec) tierModel(tier string) string {
	if rt := s.Tiers[tier]; rt != nil && rt.Model != "" {
		return rt.Model
	}
	return s.Model
}

// ServesTier reports whether tier is one of TierNames.
func (s *Spec) ServesTier(tier string) bool {
	if !IsTier(tier) {
		return false
	}
	_, ok := s.Tiers[tier]
	return ok || (s.Harness != "" && s.Model != "")
}

// TierRuntime returns the runtime of tier: the top-level runtime with the
// tier's own fields laid over it, field by field (harnessSettings one
// level deeper; a sidecar path and its content as one channel, the mode on
// its own). It returns nil when the spec does not serve the tier.
func (s *Spec) TierRuntime(tier string) *Runtime {
	if !s.ServesTier(tier) {
		return nil
	}
	rt := s.Runtime
	if t := s.Tiers[tier]; t != nil {
		mergeRuntime(&rt, t, nil, "", Origin{}, nil)
	}
	return &rt
}

// EffectiveDefaultTier returns DefaultTier, or when it is unset the first
// defined tier in the order of Tiers.
func (s *Spec) EffectiveDefaultTier() string {
	if s.DefaultTier != "" {
		return s.DefaultTier
	}
	if names := s.TierNames(); len(names) > 0 {
		return names[0]
	}
	return ""
}

// IsTier reports whether name is one of the tier names.
func IsTier(name string) bool { return slices.Contains(Tiers, name) }

// IsHarness reports whether name is one of the harnesses workforce runs.
func IsHarness(name string) bool { return slices.Contains(Harnesses, name) }

// IsKnownHarness reports whether name is a harness a persona file may name,
// one workforce runs or one it does not support yet.
func IsKnownHarness(name string) bool { return slices.Contains(KnownHarnesses, name) }

// UnsupportedHarnessError reports a harness a persona may name but
// workforce cannot run (yet): grok.
type UnsupportedHarnessError struct {
	Harness string
}

func (e *UnsupportedHarnessError) Error() string {
	return fmt.Sprintf("workforce cannot run harness %s yet; it runs %s", e.Harness, strings.Join(Harnesses, ", "))
}

// Runnable returns nil when workforce can run harness h, an
// *UnsupportedHarnessError for a known harness it cannot run yet, and an
// error naming the harnesses otherwise.
func Runnable(h string) error {
	switch {
	case IsHarness(h):
		return nil
	case IsKnownHarness(h):
		return &UnsupportedHarnessError{Harness: h}
	}
	return fmt.Errorf("unknown harness %q; want one of %s", h, strings.Join(Harnesses, ", "))
}

// SidecarRef is one sidecar file reference of a spec: where it was declared
// and the path as written.
type SidecarRef struct {
	Tier    string  // "" for the top level
	Channel Channel // claudeMd or agentsMd
	Path    string  // as stored in the spec
}

// Field is the dotted name of the field holding the reference, such as
// "claudeMd" or "tiers.best.agentsMd".
func (r SidecarRef) Field() string {
	if r.Tier == "" {
		return string(r.Channel)
	}
	return "tiers." + r.Tier + "." + string(r.Channel)
}

// SidecarRefs lists the sidecar paths the spec references, top level first,
// then tiers in the order of Tiers, claudeMd before agentsMd.
func (s *Spec) SidecarRefs() []SidecarRef {
	var refs []SidecarRef
	add := func(tier string, sc *Sidecars) {
		for _, c := range Channels {
			if p, _, _ := sc.Fields(c); *p != "" {
				refs = append(refs, SidecarRef{Tier: tier, Channel: c, Path: *p})
			}
		}
	}
	add("", &s.Sidecars)
	for _, t := range Tiers {
		if rt := s.Tiers[t]; rt != nil {
			add(t, &rt.Sidecars)
		}
	}
	return refs
}

// SetSidecarPath sets the path field named by ref to path.
func (s *Spec) SetSidecarPath(ref SidecarRef, path string) {
	sc := &s.Sidecars
	if ref.Tier != "" {
		sc = &s.Tiers[ref.Tier].Sidecars
	}
	p, _, _ := sc.Fields(ref.Channel)
	*p = path
}

// Origin names the layer and the file a value came from.
type Origin struct {
	Layer string `json:"layer"`
	File  string `json:"file"`
}

// Sidecar is the effective sidecar of one channel for one tier, after the
// cascade: either a file (Path, absolute) or inline Content, and the mode.
type Sidecar struct {
	Channel Channel `json:"channel"`
	Path    string  `json:"path,omitempty"`
	Content string  `json:"content,omitempty"`
	Mode    Mode    `json:"mode"`
	// Origin is the file that set the path or content.
	Origin Origin `json:"origin"`
}

// IsSet reports whether the channel has a path or inline content.
func (s Sidecar) IsSet() bool { return s.Path != "" || s.Content != "" }

// Resolved is a persona resolved for one tier: everything a run needs.
type Resolved struct {
	ID   string `json:"id"`
	Tier string `json:"tier"`
	// Flat is true for a persona without tiers, whose one runtime serves
	// every tier.
	Flat bool `json:"flat,omitempty"`
	// Harness, Model, SystemPrompt and HarnessSettings come from the tier,
	// field by field, else from the top level (TierRuntime).
	Harness         string          `json:"harness"`
	Model           string          `json:"model"`
	SystemPrompt    string          `json:"systemPrompt,omitempty"`
	HarnessSettings HarnessSettings `json:"harnessSettings"`
	// Claude and Agents are the effective sidecars of the two channels; a
	// channel with no sidecar has IsSet false.
	Claude Sidecar `json:"claudeMd"`
	Agents Sidecar `json:"agentsMd"`
	// The persona-wide settings.
	Inputs      map[string]Input     `json:"inputs,omitempty"`
	Env         map[string]string    `json:"env,omitempty"`
	MCPServers  map[string]MCPServer `json:"mcpServers,omitempty"`
	Permissions Permissions          `json:"permissions"`
	Mount       Mount                `json:"mount"`
	Skills      []Skill              `json:"skills,omitempty"`
	Native      *Native              `json:"native,omitempty"`
	// Origins names, for each runtime field with a value ("harness",
	// "model", "systemPrompt", "harnessSettings.reasoning", ...), the layer
	// and file that set it.
	Origins map[string]Origin `json:"origins,omitempty"`
	// Network are the persona's network policies for the tier, each of
	// which narrows the run's: the top level's, then the tier's.
	Network []ScopedNetwork `json:"network,omitempty"`
}

// ScopedNetwork is a network policy of a persona: the field that holds
// it ("network", "tiers.best.network"), the file that set it, the policy.
type ScopedNetwork struct {
	Field  string       `json:"field"`
	Origin Origin       `json:"origin"`
	Spec   netspec.Spec `json:"spec"`
}

// Sidecar returns the effective sidecar of channel c.
func (r *Resolved) Sidecar(c Channel) Sidecar {
	if c == ChannelClaude {
		return r.Claude
	}
	return r.Agents
}

// File is a persona JSON file held in memory, as the built-in catalog holds
// them: Name is the file name ("code-reviewer.json") and Data its bytes.
type File struct {
	Name string
	Data []byte
}
