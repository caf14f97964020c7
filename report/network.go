package report

import "strconv"

// Network is what a confined run's network did, as the proxy recorded it
// (<home>/results/<session-id>/network.jsonl): the policy's mode, and the
// destinations it allowed and denied, each once with its count of
// connections (and, allowed, the bytes both ways). Its lists are printed
// as [] when empty.
type Network struct {
	// Mode is the resolved policy's mode: allowlist, open or none.
	Mode    string           `json:"mode"`
	Allowed []NetworkAllowed `json:"allowed"`
	Denied  []NetworkDenied  `json:"denied"`
}

// NetworkAllowed is a destination the proxy let the harness reach: Count
// connections, Bytes both ways in all.
type NetworkAllowed struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// NetworkDenied is a destination the proxy refused the harness, Count
// times.
type NetworkDenied struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

// MarshalJSON prints n with its nil lists as [].
func (n Network) MarshalJSON() ([]byte, error) {
	type plain Network
	p := plain(n)
	if p.Allowed == nil {
		p.Allowed = []NetworkAllowed{}
	}
	if p.Denied == nil {
		p.Denied = []NetworkDenied{}
	}
	return marshal(p)
}

// DeniedHosts returns the destinations n denied as HOST:PORT, in n's
// order; nil for a nil n.
func (n *Network) DeniedHosts() []string {
	if n == nil {
		return nil
	}
	var out []string
	for _, d := range n.Denied {
		out = append(out, d.String())
	}
	return out
}

// String is the destination as HOST:PORT ([IPv6]:PORT).
func (d NetworkDenied) String() string { return hostPort(d.Host, d.Port) }

// hostPort joins host and port, an IPv6 address in brackets.
func hostPort(host string, port int) string {
	for i := 0; i < len(host); i++ {
		if host[i] == ':' {
			host = "[" + host + "]"
			break
		}
	}
	return host + ":" + strconv.Itoa(port)
}

// NetworkPolicy is a run's network policies before they are resolved, as
// run --dry-run shows them: the user's (config.json and the flags), then
// each narrowing (the persona's top level and tier, a batch task's) with
// where it came from.
type NetworkPolicy struct {
	User   NetSpec   `json:"user"`
	Narrow []NetSpec `json:"narrow,omitempty"`
}

// NetSpec is one source's network policy: a mode, hosts, presets (absent:
// the default's; []: none), and its origin.
type NetSpec struct {
	Mode    string    `json:"mode,omitempty"`
	Allow   []string  `json:"allow,omitempty"`
	Presets *[]string `json:"presets,omitzero"`
	Origin  string    `json:"origin"`
}

// NetworkRecord is one connection of a confined run as the network
// proxy records it, a line of <home>/results/<session-id>/network.jsonl:
// when, the destination, whether it was allowed, and the bytes each way.
type NetworkRecord struct {
	Time    string `json:"time"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Up and Down are the bytes sent to the destination and received
	// from it.
	Up   int64 `json:"up"`
	Down int64 `json:"down"`
}

// SummarizeNetwork returns the result's network of a run of policy mode
// from its records: each destination once, in the order of its first
// connection, with its count (and, allowed, its bytes both ways).
func SummarizeNetwork(mode string, recs []NetworkRecord) *Network {
	n := &Network{Mode: mode}
	allowed, denied := map[string]int{}, map[string]int{}
	for _, r := range recs {
		key := hostPort(r.Host, r.Port)
		if r.Allowed {
			i, ok := allowed[key]
			if !ok {
				i = len(n.Allowed)
				allowed[key] = i
				n.Allowed = append(n.Allowed, NetworkAllowed{Host: r.Host, Port: r.Port})
			}
			n.Allowed[i].Count++
			n.Allowed[i].Bytes += r.Up + r.Down
			continue
		}
		i, ok := denied[key]
		if !ok {
			i = len(n.Denied)
			denied[key] = i
			n.Denied = append(n.Denied, NetworkDenied{Host: r.Host, Port: r.Port})
		}
		n.Denied[i].Count++
	}
	return n
}
