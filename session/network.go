package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/persona"
)

// NetSpec is one source's word on a confined run's network: a mode
// (allowlist, open or none; "" says nothing), hosts to allow
// (HOST[:PORT], *.suffix), and the presets (nil says nothing, an empty
// list drops the default's), with Origin naming where it came from
// (config.json's path and the flags, a persona file's field, a batch
// task). The words are checked where they are read (internal/netspec);
// what they mean together is the egress package's (egress.Resolve).
type NetSpec struct {
	Mode    string    `json:"mode,omitzero"`
	Allow   []string  `json:"allow,omitzero"`
	Presets *[]string `json:"presets,omitzero"`
	Origin  string    `json:"origin"`
}

// NetworkSettings are the network policies of a run, unresolved: User is
// the user's word (config.json's "network", widened by --network and
// --network-allow), which may widen the default; each of Narrow (the
// persona's top level and tier, harnessSettings.workspaceWriteNetworkAccess
// false as mode none, a batch task's --network-narrow) may only narrow it.
type NetworkSettings struct {
	User   NetSpec   `json:"user"`
	Narrow []NetSpec `json:"narrow,omitzero"`
}

// The names of the network flags, as origins say them.
const (
	NetworkFlag       = "--network"
	NetworkAllowFlag  = "--network-allow"
	NetworkNarrowFlag = "--network-narrow"
)

// NetworkFor returns the user's network settings of a run in the
// workforce home dir: config.json's "network", with mode (--network,
// "" for none) in place of its mode and allow (--network-allow, checked
// by the caller) added to its hosts.
func NetworkFor(dir, mode string, allow []string) (NetworkSettings, error) {
	cfg, err := home.ReadConfig(dir)
	if err != nil {
		return NetworkSettings{}, err
	}
	var u NetSpec
	var from []string
	if n := cfg.Network; n != nil {
		u.Mode, u.Allow, u.Presets = n.Mode, slices.Clone(n.Allow), n.Presets
		from = append(from, home.ConfigPath(dir))
	}
	if mode != "" {
		u.Mode = mode
		from = append(from, NetworkFlag)
	}
	if len(allow) > 0 {
		u.Allow = append(u.Allow, allow...)
		from = append(from, NetworkAllowFlag)
	}
	u.Origin = "default"
	if len(from) > 0 {
		u.Origin = strings.Join(from, ", ")
	}
	return NetworkSettings{User: u}, nil
}

// personaNetwork returns the narrowings persona r brings: its top
// level's and its tier's network, and mode none for
// harnessSettings.workspaceWriteNetworkAccess false, each with the file
// and field it came from.
func personaNetwork(r *persona.Resolved) []NetSpec {
	var out []NetSpec
	for _, n := range r.Network {
		out = append(out, NetSpec{Mode: n.Spec.Mode, Allow: n.Spec.Allow, Presets: n.Spec.Presets,
			Origin: originOf(n.Origin, n.Field)})
	}
	if v := r.HarnessSettings.WorkspaceWriteNetworkAccess; v != nil && !*v {
		const field = "harnessSettings.workspaceWriteNetworkAccess"
		out = append(out, NetSpec{Mode: "none", Origin: originOf(r.Origins[field], field) + " false"})
	}
	return out
}

// originOf names a persona's field as an origin: "FILE: FIELD".
func originOf(o persona.Origin, field string) string {
	if o.File == "" {
		return fmt.Sprintf("persona %s", field)
	}
	return fmt.Sprintf("%s: %s", o.File, field)
}
