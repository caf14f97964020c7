package report

import "encoding/json"

// Persona is a persona as its JSON file says it (the format of the persona
// schema), or the persona the cascade merged: what show --json prints as
// "spec". Its fields are the schema's, in the schema's order.
type Persona struct {
	Schema      string               `json:"$schema,omitempty"`
	ID          string               `json:"id"`
	Extends     string               `json:"extends,omitempty"`
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
	Native      *Native              `json:"native,omitempty"`
	// Runtime is the top-level runtime, its fields at the top level.
	Runtime
	CloudFields
}

// Runtime is what a persona runs: harness, model, prompt, settings and
// the six sidecar fields.
type Runtime struct {
	Harness         string           `json:"harness,omitempty"`
	Model           string           `json:"model,omitempty"`
	SystemPrompt    string           `json:"systemPrompt,omitempty"`
	HarnessSettings *HarnessSettings `json:"harnessSettings,omitempty"`
	Sidecars
}

// Sidecars are the six sidecar fields of a runtime.
type Sidecars struct {
	ClaudeMd        string `json:"claudeMd,omitempty"`
	ClaudeMdMode    string `json:"claudeMdMode,omitempty"`
	ClaudeMdContent string `json:"claudeMdContent,omitempty"`
	AgentsMd        string `json:"agentsMd,omitempty"`
	AgentsMdMode    string `json:"agentsMdMode,omitempty"`
	AgentsMdContent string `json:"agentsMdContent,omitempty"`
}

// HarnessSettings are the harness-level settings of a runtime.
type HarnessSettings struct {
	Reasoning                            string `json:"reasoning,omitempty"`
	TimeoutSeconds                       int    `json:"timeoutSeconds,omitempty"`
	SandboxMode                          string `json:"sandboxMode,omitempty"`
	ApprovalPolicy                       string `json:"approvalPolicy,omitempty"`
	WorkspaceWriteNetworkAccess          *bool  `json:"workspaceWriteNetworkAccess,omitempty"`
	WebSearch                            *bool  `json:"webSearch,omitempty"`
	DangerouslyBypassApprovalsAndSandbox *bool  `json:"dangerouslyBypassApprovalsAndSandbox,omitempty"`
}

// Skill is a skill of a persona.
type Skill struct {
	ID          string            `json:"id"`
	Source      string            `json:"source"`
	Description string            `json:"description,omitempty"`
	Files       map[string]string `json:"files,omitempty"`
}

// Input is a run input of a persona.
type Input struct {
	Description string       `json:"description,omitempty"`
	Env         string       `json:"env,omitempty"`
	Default     *string      `json:"default,omitempty"`
	Optional    bool         `json:"optional,omitempty"`
	Picker      *InputPicker `json:"picker,omitempty"`
}

// InputPicker is agentworkforce's picker of an input's value.
type InputPicker struct {
	Provider string `json:"provider"`
	Resource string `json:"resource"`
}

// MCPServer is an MCP server of a persona.
type MCPServer struct {
	Type    string            `json:"type"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Permissions are a persona's permission rules and mode.
type Permissions struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Mode  string   `json:"mode,omitempty"`
}

// Mount is a persona's sandbox settings.
type Mount struct {
	Enabled          *bool    `json:"enabled,omitempty"`
	IgnoredPatterns  []string `json:"ignoredPatterns,omitempty"`
	ReadonlyPatterns []string `json:"readonlyPatterns,omitempty"`
}

// CloudFields are agentworkforce's cloud fields, kept as written.
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

// Native holds, per harness, the keys of a native agent file that have no
// persona field, as written.
type Native struct {
	Claude   json.RawMessage `json:"claude,omitempty"`
	Opencode json.RawMessage `json:"opencode,omitempty"`
	Codex    json.RawMessage `json:"codex,omitempty"`
}

// Sidecar is the effective sidecar of one channel of a resolved persona.
type Sidecar struct {
	Channel string `json:"channel"`
	Path    string `json:"path,omitempty"`
	Content string `json:"content,omitempty"`
	Mode    string `json:"mode"`
	Origin  Origin `json:"origin"`
}

// Resolved is a persona resolved for one tier: what runs.
type Resolved struct {
	ID              string               `json:"id"`
	Tier            string               `json:"tier"`
	Flat            bool                 `json:"flat,omitempty"`
	Harness         string               `json:"harness"`
	Model           string               `json:"model"`
	SystemPrompt    string               `json:"systemPrompt,omitempty"`
	HarnessSettings HarnessSettings      `json:"harnessSettings"`
	Claude          Sidecar              `json:"claudeMd"`
	Agents          Sidecar              `json:"agentsMd"`
	Inputs          map[string]Input     `json:"inputs,omitempty"`
	Env             map[string]string    `json:"env,omitempty"`
	MCPServers      map[string]MCPServer `json:"mcpServers,omitempty"`
	Permissions     Permissions          `json:"permissions"`
	Mount           Mount                `json:"mount"`
	Skills          []Skill              `json:"skills,omitempty"`
	Native          *Native              `json:"native,omitempty"`
	// Origins says where harness, model and systemPrompt came from.
	Origins map[string]Origin `json:"origins,omitempty"`
}

// Mapping is what a harness gets for each persona value that changes
// what the agent may do or how it runs, and what it refuses.
type Mapping struct {
	Harness  string         `json:"harness"`
	Measured string         `json:"measured"`
	Fields   []FieldMapping `json:"fields"`
}

// FieldMapping is one persona value and what the harness gets for it
// (Applied), or why it cannot express it (Refused).
type FieldMapping struct {
	Field   string `json:"field"`
	Value   string `json:"value"`
	Applied string `json:"applied,omitempty"`
	Refused string `json:"refused,omitempty"`
}

// ListRow is one persona of `workforce list`.
type ListRow struct {
	ID          string   `json:"id"`
	Source      string   `json:"source"`
	Path        string   `json:"path"`
	Tiers       []string `json:"tiers"`
	DefaultTier string   `json:"defaultTier"`
	Harness     string   `json:"harness"`
	Description string   `json:"description"`
	// Form is "flat" (one runtime serves every tier) or "tiered".
	Form string `json:"form"`
	// Harnesses are the harnesses of all its tiers.
	Harnesses []string `json:"harnesses"`
	Tags      []string `json:"tags"`
}

// List is what `workforce list --json` prints; the table is printed from
// the same value.
type List struct {
	Personas []ListRow `json:"personas"`
	Warnings []string  `json:"warnings"`
}

// Show is one persona of `workforce show --json`.
type Show struct {
	ID     string   `json:"id"`
	Source string   `json:"source"`
	Path   string   `json:"path"`
	Chain  []Origin `json:"chain"`
	// Overrides is the persona of the same id in a lower layer this one
	// is laid over, Inherits the fields that come from below; Shadows
	// the one it hides, taking nothing from it.
	Overrides *Origin  `json:"overrides,omitempty"`
	Inherits  []string `json:"inherits,omitempty"`
	Shadows   *Origin  `json:"shadows,omitempty"`
	// Form is "flat" (one runtime serves every tier) or "tiered".
	Form string   `json:"form"`
	Spec *Persona `json:"spec"`
	// Provenance names, for each dotted field, the layers and files that
	// set it, the winning one first.
	Provenance map[string][]Origin `json:"provenance"`
	Resolved   *Resolved           `json:"resolved"`
	Warnings   []string            `json:"warnings"`
	// Mapping is what the harness of --harness gets, field by field.
	Mapping *Mapping `json:"mapping,omitempty"`
}

// Source is one layer of `workforce sources list`.
type Source struct {
	Name     string `json:"name"`
	Dir      string `json:"dir,omitempty"`
	Exists   bool   `json:"exists"`
	Personas int    `json:"personas"`
}

// Sources is what `workforce sources list --json` prints.
type Sources struct {
	Sources []Source `json:"sources"`
}
