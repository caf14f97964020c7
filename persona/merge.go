package persona

import (
	"encoding/json"
	"maps"
	"slices"
)

// Provenance maps a dotted field name ("tiers.best.model", "env.TOKEN",
// "claudeMd") to the files that set it. Most fields have one origin; list
// fields that append across layers (mount patterns, permission lists) have
// one per contributing file, base first.
type Provenance map[string][]Origin

// set and appendTo record an origin; on a nil Provenance they do nothing,
// so that the cascade merges without recording.
func (p Provenance) set(field string, o Origin) {
	if p != nil {
		p[field] = []Origin{o}
	}
}

func (p Provenance) appendTo(field string, o Origin) {
	if p != nil {
		p[field] = append(p[field], o)
	}
}

// standalone returns the persona that src, declared in the file of origin
// o, makes on its own, with nothing below it: what mergeSpec gives over an
// empty spec, without extends or $schema. Most personas of a large catalog
// are such files, so it shares src's maps and lists instead of copying them
// (mergeSpec never writes into shared values), and returns src itself when
// it has no extends and no $schema to drop. The rare files where merging
// over nothing changes something (a permission listed twice, a null tier)
// take the merge.
func standalone(src *Spec, o Origin) *Spec {
	plain := src.Permissions == nil || (!hasRepeats(src.Permissions.Allow) && !hasRepeats(src.Permissions.Deny))
	for _, rt := range src.Tiers {
		plain = plain && rt != nil
	}
	if !plain {
		dst := &Spec{}
		mergeSpec(dst, nil, src, o)
		dst.Extends, dst.Schema = "", ""
		return dst
	}
	if src.Extends == "" && src.Schema == "" {
		return src
	}
	c := *src
	c.Extends, c.Schema = "", ""
	return &c
}

// hasRepeats reports whether a list holds an element twice.
func hasRepeats(list []string) bool {
	for i, x := range list {
		if slices.Contains(list[:i], x) {
			return true
		}
	}
	return false
}

// mergeSpec lays src, declared in the file of origin o, over dst, following
// the cascade rules: tags, description, skills, defaultTier and intent
// replace; env, inputs and mcpServers merge key by key; mount pattern lists
// append, base first; permission lists union; tiers merge field by field
// (harnessSettings one level deeper); a sidecar path and its inline content
// form one channel owned by whoever sets either; modes cascade on their own.
// A field of the top-level runtime (harness, model, systemPrompt, a
// harnessSettings key, a sidecar channel or mode) that src sets is cleared
// in dst's tiers: a higher layer wins, and within one file a tier wins over
// the top level. The cloud fields replace as a whole.
//
// mergeSpec writes only dst's own fields: a map, list or struct it changes
// is replaced by a new one, never written into, and src's values are
// shared, not copied. So a persona is a shallow copy of its base with
// mergeSpec applied, and every spec of a catalog stays as it was built.
func mergeSpec(dst *Spec, prov Provenance, src *Spec, o Origin) {
	dst.ID = src.ID
	prov.set("id", o)
	// inherit says how the file itself is laid: it is not inherited.
	dst.Inherit = src.Inherit
	if src.Inherit != nil {
		prov.set("inherit", o)
	} else if prov != nil {
		delete(prov, "inherit")
	}
	if src.Intent != "" {
		dst.Intent = src.Intent
		prov.set("intent", o)
	}
	if src.Tags != nil {
		dst.Tags = src.Tags
		prov.set("tags", o)
	}
	if src.Description != "" {
		dst.Description = src.Description
		prov.set("description", o)
	}
	if src.Skills != nil {
		dst.Skills = src.Skills
		prov.set("skills", o)
	}
	if src.DefaultTier != "" {
		dst.DefaultTier = src.DefaultTier
		prov.set("defaultTier", o)
	}
	mergeMap(&dst.Env, src.Env, prov, "env.", o)
	mergeMap(&dst.Inputs, src.Inputs, prov, "inputs.", o)
	mergeMap(&dst.MCPServers, src.MCPServers, prov, "mcpServers.", o)
	if src.Permissions != nil {
		d, s := &Permissions{}, src.Permissions
		if dst.Permissions != nil {
			*d = *dst.Permissions
		}
		dst.Permissions = d
		if len(s.Allow) > 0 {
			d.Allow = union(d.Allow, s.Allow)
			prov.appendTo("permissions.allow", o)
		}
		if len(s.Deny) > 0 {
			d.Deny = union(d.Deny, s.Deny)
			prov.appendTo("permissions.deny", o)
		}
		if s.Mode != "" {
			d.Mode = s.Mode
			prov.set("permissions.mode", o)
		}
	}
	if src.Mount != nil {
		d, s := &Mount{}, src.Mount
		if dst.Mount != nil {
			*d = *dst.Mount
		}
		dst.Mount = d
		if s.Enabled != nil {
			v := *s.Enabled
			d.Enabled = &v
			prov.set("mount.enabled", o)
		}
		if len(s.IgnoredPatterns) > 0 {
			d.IgnoredPatterns = append(slices.Clone(d.IgnoredPatterns), s.IgnoredPatterns...)
			prov.appendTo("mount.ignoredPatterns", o)
		}
		if len(s.ReadonlyPatterns) > 0 {
			d.ReadonlyPatterns = append(slices.Clone(d.ReadonlyPatterns), s.ReadonlyPatterns...)
			prov.appendTo("mount.readonlyPatterns", o)
		}
		if s.Tree != "" {
			d.Tree = s.Tree
			prov.set("mount.tree", o)
		}
	}
	mergeCloud(&dst.CloudFields, &src.CloudFields, prov, o)
	if n := src.Native; n != nil {
		// Each harness's block replaces the lower layer's as a whole.
		d := &Native{}
		if dst.Native != nil {
			*d = *dst.Native
		}
		for _, b := range []struct {
			d *json.RawMessage
			s json.RawMessage
			h string
		}{{&d.Claude, n.Claude, HarnessClaude}, {&d.Opencode, n.Opencode, HarnessOpencode}, {&d.Codex, n.Codex, HarnessCodex}} {
			if b.s != nil {
				*b.d = b.s
				prov.set("native."+b.h, o)
			}
		}
		dst.Native = d
	}
	// The top-level runtime: what src sets there is the value of every
	// tier below it too, so it clears that field in dst's tiers (a higher
	// layer wins); src's own tiers are laid over it next (within one file
	// the tier wins).
	var buf [16]string
	set := buf[:0]
	mergeRuntime(&dst.Runtime, &src.Runtime, prov, "", o, &set)
	if len(set) > 0 && len(dst.Tiers) > 0 {
		dst.Tiers = clearTierFields(dst.Tiers, set, prov)
	}
	if len(src.Tiers) > 0 {
		tiers := make(map[string]*Runtime, len(Tiers))
		maps.Copy(tiers, dst.Tiers)
		for _, name := range Tiers {
			st := src.Tiers[name]
			if st == nil {
				continue
			}
			dt := &Runtime{}
			if old := tiers[name]; old != nil {
				*dt = *old
			}
			tiers[name] = dt
			mergeRuntime(dt, st, prov, "tiers."+name+".", o, nil)
		}
		dst.Tiers = tiers
	}
}

// mergeRuntime lays s over d field by field. When set is not nil, it
// appends the names of the fields s set, relative to prefix ("model",
// "harnessSettings.reasoning", "claudeMd" for the channel,
// "claudeMdMode").
func mergeRuntime(d, s *Runtime, prov Provenance, prefix string, o Origin, set *[]string) {
	mergeString(&d.Harness, s.Harness, prov, prefix, "harness", o, set)
	mergeString(&d.Model, s.Model, prov, prefix, "model", o, set)
	mergeString(&d.SystemPrompt, s.SystemPrompt, prov, prefix, "systemPrompt", o, set)
	if hs := s.HarnessSettings; hs != nil {
		dh := &HarnessSettings{}
		if d.HarnessSettings != nil {
			*dh = *d.HarnessSettings
		}
		d.HarnessSettings = dh
		mergeString(&dh.Reasoning, hs.Reasoning, prov, prefix, "harnessSettings.reasoning", o, set)
		mergeString(&dh.SandboxMode, hs.SandboxMode, prov, prefix, "harnessSettings.sandboxMode", o, set)
		mergeString(&dh.ApprovalPolicy, hs.ApprovalPolicy, prov, prefix, "harnessSettings.approvalPolicy", o, set)
		if hs.TimeoutSeconds != 0 {
			dh.TimeoutSeconds = hs.TimeoutSeconds
			noteSet(prov, prefix, "harnessSettings.timeoutSeconds", o, set)
		}
		mergeBool(&dh.WorkspaceWriteNetworkAccess, hs.WorkspaceWriteNetworkAccess, prov, prefix, "harnessSettings.workspaceWriteNetworkAccess", o, set)
		mergeBool(&dh.WebSearch, hs.WebSearch, prov, prefix, "harnessSettings.webSearch", o, set)
		mergeBool(&dh.DangerouslyBypassApprovalsAndSandbox, hs.DangerouslyBypassApprovalsAndSandbox, prov, prefix, "harnessSettings.dangerouslyBypassApprovalsAndSandbox", o, set)
	}
	if s.Network != nil {
		d.Network = s.Network
		noteSet(prov, prefix, "network", o, set)
	}
	for _, c := range Channels {
		dp, dm, dc := d.Fields(c)
		sp, sm, sc := s.Sidecars.Fields(c)
		if *sp != "" || *sc != "" {
			*dp, *dc = *sp, *sc
			noteSet(prov, prefix, string(c), o, set)
		}
		if *sm != "" {
			*dm = *sm
			noteSet(prov, prefix, string(c)+"Mode", o, set)
		}
	}
}

// noteSet records that field (below prefix) was set by o.
func noteSet(prov Provenance, prefix, field string, o Origin, set *[]string) {
	if prov != nil {
		prov.set(prefix+field, o)
	}
	if set != nil {
		*set = append(*set, field)
	}
}

func mergeString(d *string, s string, prov Provenance, prefix, field string, o Origin, set *[]string) {
	if s != "" {
		*d = s
		noteSet(prov, prefix, field, o, set)
	}
}

func mergeBool(d **bool, s *bool, prov Provenance, prefix, field string, o Origin, set *[]string) {
	if s != nil {
		v := *s
		*d = &v
		noteSet(prov, prefix, field, o, set)
	}
}

// clearTierFields returns tiers with the named fields (as mergeRuntime
// names them) cleared in every tier, and their provenance dropped, so that
// the top level's new value shows through. Tiers are copied, never written
// into; a tier left with nothing is dropped.
func clearTierFields(tiers map[string]*Runtime, fields []string, prov Provenance) map[string]*Runtime {
	touched := false
	for _, rt := range tiers {
		if rt == nil {
			continue
		}
		c := *rt // a shallow copy: clearRuntimeField only reads HarnessSettings' fields through it when asked
		if c.HarnessSettings != nil {
			hs := *c.HarnessSettings
			c.HarnessSettings = &hs
		}
		for _, f := range fields {
			touched = touched || clearRuntimeField(&c, f)
		}
	}
	if !touched {
		return tiers
	}
	out := make(map[string]*Runtime, len(tiers))
	for name, rt := range tiers {
		out[name] = rt
		if rt == nil {
			continue
		}
		c := *rt
		if c.HarnessSettings != nil {
			hs := *c.HarnessSettings
			c.HarnessSettings = &hs
		}
		changed := false
		for _, f := range fields {
			if clearRuntimeField(&c, f) {
				changed = true
				if prov != nil {
					delete(prov, "tiers."+name+"."+f)
				}
			}
		}
		if !changed {
			continue
		}
		if c.HarnessSettings != nil && *c.HarnessSettings == (HarnessSettings{}) {
			c.HarnessSettings = nil
		}
		if c.isZero() {
			delete(out, name)
			continue
		}
		out[name] = &c
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// clearRuntimeField clears the field of rt that mergeRuntime names f and
// reports whether it was set.
func clearRuntimeField(rt *Runtime, f string) bool {
	str := func(p *string) bool {
		was := *p != ""
		*p = ""
		return was
	}
	boolean := func(p **bool) bool {
		was := *p != nil
		*p = nil
		return was
	}
	hs := rt.HarnessSettings
	if hs == nil {
		hs = &HarnessSettings{}
	}
	switch f {
	case "network":
		was := rt.Network != nil
		rt.Network = nil
		return was
	case "harness":
		return str(&rt.Harness)
	case "model":
		return str(&rt.Model)
	case "systemPrompt":
		return str(&rt.SystemPrompt)
	case "harnessSettings.reasoning":
		return str(&hs.Reasoning)
	case "harnessSettings.sandboxMode":
		return str(&hs.SandboxMode)
	case "harnessSettings.approvalPolicy":
		return str(&hs.ApprovalPolicy)
	case "harnessSettings.timeoutSeconds":
		was := hs.TimeoutSeconds != 0
		hs.TimeoutSeconds = 0
		return was
	case "harnessSettings.workspaceWriteNetworkAccess":
		return boolean(&hs.WorkspaceWriteNetworkAccess)
	case "harnessSettings.webSearch":
		return boolean(&hs.WebSearch)
	case "harnessSettings.dangerouslyBypassApprovalsAndSandbox":
		return boolean(&hs.DangerouslyBypassApprovalsAndSandbox)
	}
	for _, c := range Channels {
		p, m, content := rt.Sidecars.Fields(c)
		switch f {
		case string(c):
			was := *p != "" || *content != ""
			*p, *content = "", ""
			return was
		case string(c) + "Mode":
			was := *m != ""
			*m = ""
			return was
		}
	}
	return false
}

func (rt *Runtime) isZero() bool {
	return rt.Harness == "" && rt.Model == "" && rt.SystemPrompt == "" && rt.HarnessSettings == nil && rt.Network == nil && rt.Sidecars == (Sidecars{})
}

// mergeCloud lays the cloud fields of s over d: each replaces as a whole.
func mergeCloud(d, s *CloudFields, prov Provenance, o Origin) {
	boolean := func(d **bool, s *bool, field string) {
		if s != nil {
			*d = s
			prov.set(field, o)
		}
	}
	raw := func(d *json.RawMessage, s json.RawMessage, field string) {
		if s != nil {
			*d = s
			prov.set(field, o)
		}
	}
	boolean(&d.Sandbox, s.Sandbox, "sandbox")
	boolean(&d.Cloud, s.Cloud, "cloud")
	boolean(&d.UseSubscription, s.UseSubscription, "useSubscription")
	raw(&d.Integrations, s.Integrations, "integrations")
	raw(&d.Capabilities, s.Capabilities, "capabilities")
	raw(&d.Memory, s.Memory, "memory")
	raw(&d.Relay, s.Relay, "relay")
	if s.OnEvent != "" {
		d.OnEvent = s.OnEvent
		prov.set("onEvent", o)
	}
}

func mergeMap[V any](d *map[string]V, s map[string]V, prov Provenance, prefix string, o Origin) {
	if len(s) == 0 {
		return
	}
	m := make(map[string]V, len(*d)+len(s))
	maps.Copy(m, *d)
	for k, v := range s {
		m[k] = v
		prov.set(prefix+k, o)
	}
	*d = m
}

// union appends to a the elements of b not already in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
