package persona

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// effectiveSidecar returns the sidecar of channel c for tier: the tier's
// channel when the tier sets a path or content, else the top level's; the
// mode is the tier's when set, else the top level's. There is no fallback
// between the claudeMd and agentsMd channels. prov may be nil.
func effectiveSidecar(s *Spec, prov Provenance, tier string, c Channel) Sidecar {
	out := Sidecar{Channel: c}
	field := string(c)
	tp, tm, tc := s.Sidecars.Fields(c)
	out.Path, out.Content, out.Mode = *tp, *tc, *tm
	if rt := s.Tiers[tier]; rt != nil {
		p, m, content := rt.Sidecars.Fields(c)
		if *p != "" || *content != "" {
			out.Path, out.Content = *p, *content
			field = "tiers." + tier + "." + string(c)
		}
		if *m != "" {
			out.Mode = *m
		}
	}
	if o := prov[field]; len(o) > 0 && out.IsSet() {
		out.Origin = o[len(o)-1]
	}
	return out
}

// Resolve returns the persona resolved for tier; an empty tier means the
// default tier. Sidecars have their mode defaulted to overwrite.
func (p *Persona) Resolve(tier string) (*Resolved, error) {
	s := p.Spec
	if tier == "" {
		tier = s.EffectiveDefaultTier()
	}
	rt := s.TierRuntime(tier)
	if rt == nil {
		if !IsTier(tier) {
			return nil, fmt.Errorf("unknown tier %q for persona %s; tiers are %s", tier, p.ID, strings.Join(Tiers, ", "))
		}
		return nil, fmt.Errorf("persona %s does not define tier %q; it defines %s", p.ID, tier, strings.Join(s.TierNames(), ", "))
	}
	prov := p.Provenance()
	r := &Resolved{
		ID:           p.ID,
		Tier:         tier,
		Flat:         s.Flat(),
		Harness:      rt.Harness,
		Model:        rt.Model,
		SystemPrompt: rt.SystemPrompt,
		Claude:       effectiveSidecar(s, prov, tier, ChannelClaude),
		Agents:       effectiveSidecar(s, prov, tier, ChannelAgents),
		Inputs:       s.Inputs,
		Env:          s.Env,
		MCPServers:   s.MCPServers,
		Skills:       s.Skills,
		Native:       s.Native,
		Origins:      runtimeOrigins(prov, tier),
	}
	if rt.HarnessSettings != nil {
		r.HarnessSettings = *rt.HarnessSettings
	}
	if s.Permissions != nil {
		r.Permissions = *s.Permissions
	}
	for _, f := range []struct {
		field string
		n     *netspec.Spec
	}{{"network", s.Network}, {"tiers." + tier + ".network", tierNetwork(s, tier)}} {
		if f.n == nil {
			continue
		}
		sn := ScopedNetwork{Field: f.field, Spec: *f.n}
		if o := prov[f.field]; len(o) > 0 {
			sn.Origin = o[len(o)-1]
		}
		r.Network = append(r.Network, sn)
	}
	if s.Mount != nil {
		r.Mount = *s.Mount
	}
	for _, sc := range []*Sidecar{&r.Claude, &r.Agents} {
		if sc.IsSet() && sc.Mode == "" {
			sc.Mode = ModeOverwrite
		}
		if !sc.IsSet() {
			sc.Mode = ""
		}
	}
	return r, nil
}

// tierNetwork is the network policy tier itself sets, nil for none.
func tierNetwork(s *Spec, tier string) *netspec.Spec {
	if rt := s.Tiers[tier]; rt != nil {
		return rt.Network
	}
	return nil
}

// runtimeFields are the runtime fields whose origin Resolved reports.
var runtimeFields = []string{"harness", "model", "systemPrompt", "harnessSettings.reasoning", "harnessSettings.timeoutSeconds",
	"harnessSettings.sandboxMode", "harnessSettings.approvalPolicy", "harnessSettings.workspaceWriteNetworkAccess",
	"harnessSettings.webSearch", "harnessSettings.dangerouslyBypassApprovalsAndSandbox"}

// runtimeOrigins tells, for each runtime field tier has a value for, the
// file that set it: the tier's own field, else the top level's.
func runtimeOrigins(prov Provenance, tier string) map[string]Origin {
	out := map[string]Origin{}
	for _, f := range runtimeFields {
		o := prov["tiers."+tier+"."+f]
		if len(o) == 0 {
			o = prov[f]
		}
		if len(o) > 0 {
			out[f] = o[len(o)-1]
		}
	}
	return out
}

// Text returns the sidecar's text: its inline content, or the file's.
func (s Sidecar) Text() (string, error) {
	if s.Content != "" || s.Path == "" {
		return s.Content, nil
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s sidecar: %w", s.Channel, err)
	}
	return string(b), nil
}

// SplitRef splits "id@tier" into id and tier; the tier is empty when
// absent.
func SplitRef(ref string) (id, tier string) {
	id, tier, _ = strings.Cut(ref, "@")
	return id, tier
}

// MissingInputError reports required inputs that have no value.
type MissingInputError struct {
	Persona string
	Names   []string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("persona %s needs input %s: pass --input NAME=VALUE, set the environment variable, or give the input a default",
		e.Persona, strings.Join(e.Names, ", "))
}

// ResolveInputs returns the value of every input of r: the explicit value,
// else the environment variable (the input's env, defaulting to its name),
// else its default; optional inputs resolve to "". Explicit values for
// names the persona does not declare are an error.
func (r *Resolved) ResolveInputs(explicit map[string]string, getenv func(string) string) (map[string]string, error) {
	for name := range explicit {
		if _, ok := r.Inputs[name]; !ok {
			names := make([]string, 0, len(r.Inputs))
			for n := range r.Inputs {
				names = append(names, n)
			}
			sort.Strings(names)
			known := strings.Join(names, ", ")
			if known == "" {
				known = "none"
			}
			return nil, fmt.Errorf("persona %s has no input %q; its inputs: %s", r.ID, name, known)
		}
	}
	values := make(map[string]string, len(r.Inputs))
	var missing []string
	for name, in := range r.Inputs {
		if v, ok := explicit[name]; ok {
			values[name] = v
			continue
		}
		env := in.Env
		if env == "" {
			env = name
		}
		if v := getenv(env); v != "" {
			values[name] = v
			continue
		}
		switch {
		case in.Default != nil:
			values[name] = *in.Default
		case in.Optional:
			values[name] = ""
		default:
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &MissingInputError{Persona: r.ID, Names: missing}
	}
	return values, nil
}

// MissingInputs returns the names of the inputs of s that have no value
// unless one is given explicitly, sorted: those with no default, not
// optional, and with nothing in their environment variable. They are the
// names ResolveInputs reports missing when no explicit value is given;
// the persona picker asks for them.
func (s *Spec) MissingInputs(getenv func(string) string) []string {
	r := Resolved{Inputs: s.Inputs}
	var missing *MissingInputError
	if _, err := r.ResolveInputs(nil, getenv); errors.As(err, &missing) {
		return missing.Names
	}
	return nil
}

// Substitute replaces $NAME and ${NAME} in text with values[NAME]. Names
// not in values are left as they are, so that shell snippets in prompts
// survive.
func Substitute(text string, values map[string]string) string {
	if len(values) == 0 || !strings.Contains(text, "$") {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		if c != '$' || i+1 >= len(text) {
			b.WriteByte(c)
			i++
			continue
		}
		if text[i+1] == '{' {
			if end := strings.IndexByte(text[i+2:], '}'); end >= 0 {
				name := text[i+2 : i+2+end]
				if v, ok := values[name]; ok {
					b.WriteString(v)
					i += end + 3
					continue
				}
			}
			b.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j], j == i+1) {
			j++
		}
		if v, ok := values[text[i+1:j]]; ok && j > i+1 {
			b.WriteString(v)
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || isLetter(c) || (!first && c >= '0' && c <= '9')
}
