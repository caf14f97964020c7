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
//
// mergeSpec writes only dst's own fields: a map, list or struct it changes
// is replaced by a new one, never written into, and src's values are
// shared, not copied. So a persona is a shallow copy of its base with
// mergeSpec applied, and every spec of a catalog stays as it was built.
func mergeSpec(dst *Spec, prov Provenance, src *Spec, o Origin) {
	dst.ID = src.ID
	prov.set("id", o)
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
	}
	mergeSidecars(&dst.Sidecars, &src.Sidecars, prov, "", o)
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
			mergeRuntime(dt, st, prov, "tiers."+name+".", o)
		}
		dst.Tiers = tiers
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
		dh := &HarnessSettings{}
		if d.HarnessSettings != nil {
			*dh = *d.HarnessSettings
		}
		d.HarnessSettings = dh
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
