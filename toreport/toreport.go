// Package toreport converts the types of the packages that compute what
// a command prints (persona, session, harness, discover, install, native,
// mount, skill) into the types of package report, which define what it
// prints; the commands print the result. A list or map stays nil when it
// is nil and empty when it is empty: JSON tells null from [].
package toreport

import (
	"slices"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/seed-3bc194a6/workforce/skill"
)

// Each converts every element of s with f; nil stays nil.
func Each[T, U any](s []T, f func(T) U) []U {
	if s == nil {
		return nil
	}
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// eachValue converts every value of m with f; nil stays nil.
func eachValue[K comparable, T, U any](m map[K]T, f func(T) U) map[K]U {
	if m == nil {
		return nil
	}
	out := make(map[K]U, len(m))
	for k, v := range m {
		out[k] = f(v)
	}
	return out
}

// Ptr converts what p points to with f; nil stays nil.
func Ptr[T, U any](p *T, f func(T) U) *U {
	if p == nil {
		return nil
	}
	u := f(*p)
	return &u
}

// Origin is a persona layer file o in report's terms.
func Origin(o persona.Origin) report.Origin { return report.Origin{Layer: o.Layer, File: o.File} }

// Persona is the persona spec s in report's terms.
func Persona(s persona.Spec) report.Persona {
	return report.Persona{
		Schema: s.Schema, ID: s.ID, Extends: s.Extends, Inherit: s.Inherit, Intent: s.Intent,
		Tags: s.Tags, Description: s.Description,
		Tiers:       eachValue(s.Tiers, func(r *persona.Runtime) *report.Runtime { return Ptr(r, toRuntime) }),
		DefaultTier: s.DefaultTier,
		Skills:      Each(s.Skills, toSkill),
		Inputs:      eachValue(s.Inputs, toInput),
		Env:         s.Env,
		MCPServers:  eachValue(s.MCPServers, toMCPServer),
		Permissions: Ptr(s.Permissions, toPermissions),
		Mount:       Ptr(s.Mount, toMount),
		Native:      Ptr(s.Native, toNative),
		Runtime:     toRuntime(s.Runtime),
		CloudFields: report.CloudFields{
			Sandbox: s.Sandbox, Cloud: s.Cloud, UseSubscription: s.UseSubscription,
			Integrations: s.Integrations, Capabilities: s.Capabilities, Memory: s.Memory, Relay: s.Relay,
			OnEvent: s.OnEvent,
		},
	}
}

func toRuntime(r persona.Runtime) report.Runtime {
	return report.Runtime{
		Harness: r.Harness, Model: r.Model, SystemPrompt: r.SystemPrompt,
		HarnessSettings: Ptr(r.HarnessSettings, toHarnessSettings),
		Sidecars: report.Sidecars{
			ClaudeMd: r.ClaudeMd, ClaudeMdMode: string(r.ClaudeMdMode), ClaudeMdContent: r.ClaudeMdContent,
			AgentsMd: r.AgentsMd, AgentsMdMode: string(r.AgentsMdMode), AgentsMdContent: r.AgentsMdContent,
		},
	}
}

func toHarnessSettings(h persona.HarnessSettings) report.HarnessSettings {
	return report.HarnessSettings{
		Reasoning: h.Reasoning, TimeoutSeconds: h.TimeoutSeconds, SandboxMode: h.SandboxMode,
		ApprovalPolicy: h.ApprovalPolicy, WorkspaceWriteNetworkAccess: h.WorkspaceWriteNetworkAccess,
		WebSearch: h.WebSearch, DangerouslyBypassApprovalsAndSandbox: h.DangerouslyBypassApprovalsAndSandbox,
	}
}

func toSkill(s persona.Skill) report.Skill {
	return report.Skill{ID: s.ID, Source: s.Source, Description: s.Description, Files: s.Files}
}

func toInput(in persona.Input) report.Input {
	return report.Input{
		Description: in.Description, Env: in.Env, Default: in.Default, Optional: in.Optional,
		Picker: Ptr(in.Picker, func(p persona.InputPicker) report.InputPicker {
			return report.InputPicker{Provider: p.Provider, Resource: p.Resource}
		}),
	}
}

func toMCPServer(s persona.MCPServer) report.MCPServer {
	return report.MCPServer{Type: s.Type, URL: s.URL, Headers: s.Headers, Command: s.Command, Args: s.Args, Env: s.Env}
}

func toPermissions(p persona.Permissions) report.Permissions {
	return report.Permissions{Allow: p.Allow, Deny: p.Deny, Mode: p.Mode}
}

func toMount(m persona.Mount) report.Mount {
	return report.Mount{Enabled: m.Enabled, IgnoredPatterns: m.IgnoredPatterns, ReadonlyPatterns: m.ReadonlyPatterns}
}

func toNative(n persona.Native) report.Native {
	return report.Native{Claude: n.Claude, Opencode: n.Opencode, Codex: n.Codex}
}

func toSidecar(s persona.Sidecar) report.Sidecar {
	return report.Sidecar{Channel: string(s.Channel), Path: s.Path, Content: s.Content, Mode: string(s.Mode), Origin: Origin(s.Origin)}
}

// Resolved is the resolved persona r in report's terms.
func Resolved(r persona.Resolved) report.Resolved {
	return report.Resolved{
		ID: r.ID, Tier: r.Tier, Flat: r.Flat, Harness: r.Harness, Model: r.Model, SystemPrompt: r.SystemPrompt,
		HarnessSettings: toHarnessSettings(r.HarnessSettings),
		Claude:          toSidecar(r.Claude), Agents: toSidecar(r.Agents),
		Inputs: eachValue(r.Inputs, toInput), Env: r.Env, MCPServers: eachValue(r.MCPServers, toMCPServer),
		Permissions: toPermissions(r.Permissions), Mount: toMount(r.Mount),
		Skills: Each(r.Skills, toSkill), Native: Ptr(r.Native, toNative),
		Origins: eachValue(r.Origins, Origin),
	}
}

// Provenance is where each field of a persona came from, in report's terms.
func Provenance(p persona.Provenance) map[string][]report.Origin {
	return eachValue(p, func(os []persona.Origin) []report.Origin { return Each(os, Origin) })
}

// Mapping is how a harness gets a persona (m), in report's terms.
func Mapping(m harness.Mapping) report.Mapping {
	return report.Mapping{Harness: m.Harness, Measured: m.Measured, Fields: Each(m.Fields, func(f harness.FieldMapping) report.FieldMapping {
		return report.FieldMapping{Field: f.Field, Value: f.Value, Applied: f.Applied, Refused: f.Refused}
	})}
}

// Plan is the session plan p in report's terms.
func Plan(p *session.Plan) report.Plan {
	return report.Plan{
		Persona: p.Persona, Tier: p.Tier, Harness: p.Harness, HarnessVersion: p.HarnessVersion, VersionMeasured: p.VersionMeasured, Profile: p.Profile,
		Layers: Each(p.Layers, Origin), Resolved: Ptr(p.Resolved, Resolved),
		Root: p.Root, Cwd: p.Cwd, Sandbox: p.Sandbox, Tree: string(p.Tree), Workdir: p.Workdir,
		Materialized: Ptr(p.Materialized, func(m session.Materialized) report.Materialized {
			return report.Materialized{Path: m.Path, Mode: m.Mode, Text: m.Text}
		}),
		Extend: Ptr(p.Extend, toExtend),
		Hidden: p.Hidden, Ignored: p.Ignored, Readonly: p.Readonly, Argv: p.Argv, Env: p.Env,
		Sealed: Each(p.Sealed, func(v mount.SealedVar) report.SealedVar {
			return report.SealedVar{Name: v.Name, Value: v.Value, Dropped: v.Dropped}
		}),
		ConfigFiles: p.ConfigFiles, Notes: p.Notes, InRepo: p.InRepo,
		Skills:  Ptr(p.Skills, toSkillPlan),
		Mapping: Ptr(p.Mapping, Mapping),
		Confine: Ptr(p.Confine, toConfine),
		Network: Ptr(p.Network, toNetworkPolicy),
	}
}

// toNetworkPolicy is a plan's network policies in report's terms.
func toNetworkPolicy(n session.NetworkSettings) report.NetworkPolicy {
	spec := func(s session.NetSpec) report.NetSpec {
		return report.NetSpec{Mode: s.Mode, Allow: s.Allow, Presets: s.Presets, Origin: s.Origin}
	}
	return report.NetworkPolicy{User: spec(n.User), Narrow: Each(n.Narrow, spec)}
}

func toConfine(c session.Confinement) report.Confine {
	return report.Confine{
		Mode: c.Mode.String(), Confined: c.Confined, Writable: orEmpty(c.Policy.Dirs), Files: c.Policy.Files,
		Devices: orEmpty(c.Policy.Devices), Why: c.Why, Reads: Ptr(c.Reads, toReads),
		Namespaces: c.Namespaces, NamespacesWhy: c.NamespacesWhy, Network: (*report.NetworkPlan)(c.Network),
		Launcher: c.Launcher,
	}
}

func toReads(r session.Reads) report.Reads {
	entries := func(es []session.ReadEntry) []report.ReadEntry {
		out := make([]report.ReadEntry, 0, len(es))
		for _, e := range es {
			out = append(out, report.ReadEntry{Path: e.Path, Origin: e.Origin})
		}
		return out
	}
	out := report.Reads{Strict: r.Strict, Deny: entries(r.Deny), Allow: entries(r.Allow)}
	if len(r.Roots) > 0 {
		out.Roots = entries(r.Roots)
	}
	return out
}

// orEmpty is l, or an empty list for nil (JSON [] rather than null).
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func toExtend(e session.Extend) report.Extend {
	return report.Extend{
		Real: Ptr(e.Real, toDiscovery), Folded: e.Folded, LoadedAnyway: e.LoadedAnyway, Extra: e.Extra,
		Surfaced: e.Surfaced, Hide: e.Hide, Text: e.Text,
	}
}

func toDiscovery(r discover.Result) report.Discovery {
	file := func(f discover.File) report.DiscoveredFile {
		return report.DiscoveredFile{Path: f.Path, Canonical: f.Canonical, Dir: f.Dir, Name: f.Name, Scope: f.Scope, Bytes: f.Bytes, Truncated: f.Truncated}
	}
	return report.Discovery{
		Profile: r.Profile, Dir: r.Dir, Root: r.Root, Files: Each(r.Files, file), Dropped: Each(r.Dropped, file),
		Problems: r.Problems, Text: r.Text,
	}
}

func toSkillPlan(p skill.Plan) report.SkillPlan {
	return report.SkillPlan{
		Harness: p.Harness, Read: p.Read, Dir: p.Dir, Notes: p.Notes,
		Items: Each(p.Items, func(it *skill.Item) *report.SkillItem {
			return Ptr(it, func(it skill.Item) report.SkillItem {
				return report.SkillItem{
					ID: it.ID, Name: it.Name, Source: it.Source, Kind: string(it.Kind), Path: it.Path,
					Cache: it.Cache, CacheDir: it.CacheDir, Version: it.Version, Dest: it.Dest, Replaces: it.Replaces,
				}
			})
		}),
	}
}

// SyncReport is sync-back's report r in report's terms (run.SyncReport).
func SyncReport(r mount.Report) report.SyncReport { return run.SyncReport(r) }

// Record is the session record r in report's terms.
func Record(r session.Record) report.Record {
	return report.Record{
		Format: r.Format, ID: r.ID, Persona: r.Persona, Tier: r.Tier, Harness: r.Harness, Root: r.Root, Cwd: r.Cwd,
		Tree: string(r.Tree), PID: r.PID, Started: r.Started, HarnessPID: r.HarnessPID,
		HarnessStart: Ptr(r.HarnessStart, func(p session.ProcStart) report.ProcStart {
			return report.ProcStart{Boot: p.Boot, Ticks: p.Ticks}
		}),
		Phase: string(r.Phase), ExitCode: r.ExitCode, Error: r.Error, Report: Ptr(r.Report, SyncReport),
		Branch: r.Branch, Commits: r.Commits, Head: r.Head, HarnessSessionID: r.HarnessSessionID, Updated: r.Updated,
	}
}

// Warm is a warm sandbox w in report's terms.
func Warm(w session.Warm) report.Warm { return report.Warm{Root: w.Root, Dir: w.Dir, Time: w.Time} }

func toInstalled(in install.Installed) report.Installed {
	return report.Installed{
		ID: in.ID, File: in.File, Assets: in.Assets, Overrides: Ptr(in.Overrides, Origin),
		Inherits: in.Inherits, Shadows: Ptr(in.Shadows, Origin),
	}
}

// Install is an install's result r in report's terms.
func Install(r install.Result) report.Install {
	return report.Install{Target: r.Target, Installed: Each(r.Installed, toInstalled)}
}

// Outdated is a source's lock status s in report's terms.
func Outdated(s install.Status) report.Outdated {
	return report.Outdated{Source: s.Source, Locked: s.Locked, Current: s.Current, Outdated: s.Outdated, Why: s.Why}
}

// Dropped is a native field an export dropped (d), in report's terms.
func Dropped(d native.Dropped) report.Dropped {
	return report.Dropped{Field: d.Field, Value: d.Value, Why: d.Why}
}

// Resolution is the context files found (r), in report's terms.
func Resolution(r discover.Resolution) report.Resolution {
	return report.Resolution{Remaining: r.Remaining, Files: Each(r.Files, func(f discover.ResolvedFile) report.ResolvedFile {
		return report.ResolvedFile{Path: f.Path, Reason: f.Reason}
	})}
}

// Resume is what changed since a session (d), in report's terms.
func Resume(d discover.Diff) report.Resume {
	return report.Resume{Cwd: d.Cwd, Root: d.Root, Markers: d.Markers, Changed: d.Changed, Removed: d.Removed, Added: d.Added}
}

// HarnessStatus is a harness's installation status st in report's terms.
func HarnessStatus(st harness.Status) report.HarnessStatus {
	return report.HarnessStatus{Harness: st.Harness, Installed: st.Installed, Path: st.Path, Version: st.Version, Package: st.Package}
}

// List is what list prints of the personas of cat: those whose id matches
// one of patterns (all without), with a tier running one of harnesses
// (any without), carrying a tag that matches one of tags (any without),
// with the catalog's diagnostics as warnings. A pattern no persona
// matches, and a tag pattern no persona carries, is an error.
func List(cat *persona.Catalog, patterns, harnesses, tags []string) (report.List, error) {
	out := report.List{Personas: []report.ListRow{}, Warnings: cat.Diagnostics()}
	personas := cat.Personas
	if len(patterns) > 0 {
		var err error
		if personas, err = cat.Select(patterns...); err != nil {
			return out, err
		}
	}
	if len(tags) > 0 {
		// A tag pattern that no persona carries is a mistake, not a filter.
		var all []string
		for _, p := range cat.Personas {
			all = append(all, p.Spec.Tags...)
		}
		if _, err := persona.SelectNames("tag", all, tags); err != nil {
			return out, err
		}
	}
	for _, p := range personas {
		row := report.ListRow{
			ID: p.ID, Source: p.Layer, Path: p.Path, Tiers: orEmpty(p.Spec.TierNames()), DefaultTier: p.Spec.EffectiveDefaultTier(),
			Description: p.Spec.Description, Form: "tiered", Harnesses: orEmpty(p.Harnesses()), Tags: orEmpty(p.Spec.Tags),
		}
		if p.Spec.Flat() {
			row.Form = "flat"
		}
		if rt := p.Spec.TierRuntime(row.DefaultTier); rt != nil {
			row.Harness = rt.Harness
		}
		if len(harnesses) > 0 && !slices.ContainsFunc(row.Harnesses, func(h string) bool { return slices.Contains(harnesses, h) }) {
			continue
		}
		if len(tags) > 0 && !slices.ContainsFunc(row.Tags, func(tag string) bool {
			return slices.ContainsFunc(tags, func(pat string) bool { return persona.MatchPattern(pat, tag) })
		}) {
			continue
		}
		out.Personas = append(out.Personas, row)
	}
	return out, nil
}
