package persona

import (
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

// clone returns a deep copy of s.
func (s *Spec) clone() *Spec {
	c := *s
	c.Tags = slices.Clone(s.Tags)
	c.Skills = slices.Clone(s.Skills)
	c.Inputs = maps.Clone(s.Inputs)
	c.Env = maps.Clone(s.Env)
	c.MCPServers = maps.Clone(s.MCPServers)
	if s.Permissions != nil {
		p := *s.Permissions
		p.Allow, p.Deny = slices.Clone(p.Allow), slices.Clone(p.Deny)
		c.Permissions = &p
	}
	if s.Mount != nil {
		m := *s.Mount
		m.IgnoredPatterns, m.ReadonlyPatterns = slices.Clone(m.IgnoredPatterns), slices.Clone(m.ReadonlyPatterns)
		c.Mount = &m
	}
	if s.Tiers != nil {
		c.Tiers = make(map[string]*Runtime, len(s.Tiers))
		for name, rt := range s.Tiers {
			r := *rt
			if rt.HarnessSettings != nil {
				hs := *rt.HarnessSettings
				r.HarnessSettings = &hs
			}
			c.Tiers[name] = &r
		}
	}
	return &c
}

// mergeSpec lays src, declared in the file of origin o, over dst, following
// the cascade rules: tags, description, skills, defaultTier and intent
// replace; env, inputs and mcpServers merge key by key; mount pattern lists
// append, base first; permission lists union; tiers merge field by field
// (harnessSettings one level deeper); a sidecar path and its inline content
// form one channel owned by whoever sets either; modes cascade on their own.
func mergeSpec(dst *Spec, prov Provenance, src *Spec, o Origin) {
	dst.ID = src.ID
	prov.set("id", o)
	if src.Intent != "" {
		dst.Intent = src.Intent
		prov.set("intent", o)
	}
	if src.Tags != nil {
		dst.Tags = slices.Clone(src.Tags)
		prov.set("tags", o)
	}
	if src.Description != "" {
		dst.Description = src.Description
		prov.set("description", o)
	}
	if src.Skills != nil {
		dst.Skills = slices.Clone(src.Skills)
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
		if dst.Permissions == nil {
			dst.Permissions = &Permissions{}
		}
		d, s := dst.Permissions, src.Permissions
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
		if dst.Mount == nil {
			dst.Mount = &Mount{}
		}
		d, s := dst.Mount, src.Mount
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
	}
	mergeSidecars(&dst.Sidecars, &src.Sidecars, prov, "", o)
	for _, name := range Tiers {
		st := src.Tiers[name]
		if st == nil {
			continue
		}
		if dst.Tiers == nil {
			dst.Tiers = map[string]*Runtime{}
		}
		dt := dst.Tiers[name]
		if dt == nil {
			dt = &Runtime{}
			dst.Tiers[name] = dt
		}
		mergeRuntime(dt, st, prov, "tiers."+name+".", o)
	}
}

func mergeRuntime(d, s *Runtime, prov Provenance, prefix string, o Origin) {
	if s.Harness != "" {
		d.Harness = s.Harness
		prov.set(prefix+"harness", o)
	}
	if s.Model != "" {
		d.Model = s.Model
		prov.set(prefix+"model", o)
	}
	if s.SystemPrompt != "" {
		d.SystemPrompt = s.SystemPrompt
		prov.set(prefix+"systemPrompt", o)
	}
	if hs := s.HarnessSettings; hs != nil {
		if d.HarnessSettings == nil {
			d.HarnessSettings = &HarnessSettings{}
		}
		dh := d.HarnessSettings
		p := prefix + "harnessSettings."
		setString(&dh.Reasoning, hs.Reasoning, prov, p+"reasoning", o)
		setString(&dh.SandboxMode, hs.SandboxMode, prov, p+"sandboxMode", o)
		setString(&dh.ApprovalPolicy, hs.ApprovalPolicy, prov, p+"approvalPolicy", o)
		if hs.TimeoutSeconds != 0 {
			dh.TimeoutSeconds = hs.TimeoutSeconds
			prov.set(p+"timeoutSeconds", o)
		}
		setBool(&dh.WorkspaceWriteNetworkAccess, hs.WorkspaceWriteNetworkAccess, prov, p+"workspaceWriteNetworkAccess", o)
		setBool(&dh.WebSearch, hs.WebSearch, prov, p+"webSearch", o)
		setBool(&dh.DangerouslyBypassApprovalsAndSandbox, hs.DangerouslyBypassApprovalsAndSandbox, prov, p+"dangerouslyBypassApprovalsAndSandbox", o)
	}
	mergeSidecars(&d.Sidecars, &s.Sidecars, prov, prefix, o)
}

func mergeSidecars(d, s *Sidecars, prov Provenance, prefix string, o Origin) {
	for _, c := range Channels {
		dp, dm, dc := d.Fields(c)
		sp, sm, sc := s.Fields(c)
		if *sp != "" || *sc != "" {
			*dp, *dc = *sp, *sc
			prov.set(prefix+string(c), o)
		}
		if *sm != "" {
			*dm = *sm
			prov.set(prefix+string(c)+"Mode", o)
		}
	}
}

func setString(d *string, s string, prov Provenance, field string, o Origin) {
	if s != "" {
		*d = s
		prov.set(field, o)
	}
}

func setBool(d **bool, s *bool, prov Provenance, field string, o Origin) {
	if s != nil {
		v := *s
		*d = &v
		prov.set(field, o)
	}
}

func mergeMap[V any](d *map[string]V, s map[string]V, prov Provenance, prefix string, o Origin) {
	if len(s) == 0 {
		return
	}
	if *d == nil {
		*d = make(map[string]V, len(s))
	}
	for k, v := range s {
		(*d)[k] = v
		prov.set(prefix+k, o)
	}
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
