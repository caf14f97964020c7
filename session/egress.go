package session

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
)

// The network of a confined run. When the harness runs in namespaces of
// its own (confine.Policy.Net), its network is loopback alone, and the
// only way out is workforce's proxy (package egress), served on a
// listener the launcher makes inside and hands over:
//
//   - the run's policy is resolved from its settings (NetworkSettings:
//     config.json and the flags widen, the persona and a batch task only
//     narrow), plus what is always allowed: the harness's own API and
//     login hosts (harness.RequiredHosts), and the hosts of the base URLs
//     of the user's own environment and harness configuration (codex's
//     model providers, opencode's provider options: never a persona's env
//     or a project file, which can be the agent's); the hosts the user's own harness
//     configuration allows (harness.ReadUserPolicy) count as the user's
//     word;
//   - the harness's environment names the proxy in all six proxy
//     variables, and NO_PROXY names nothing (a loopback destination goes
//     through the proxy too, which reaches the host's loopback only for a
//     port the user listed);
//   - a host loopback port the user listed (localhost:11434), or that a
//     loopback base URL of the user's environment names, is served inside
//     on the same port (confine.Namespaces.LoopbackPorts, egress
//     Forward), for a client that ignores the proxy variables;
//   - an API key of the user's environment or of a file seeded into the
//     session's state, and claude's apiKeyHelper, are brokered: the
//     harness gets a placeholder and a base URL at the proxy, which adds
//     the real key on the way to the provider (egress.Broker; planBrokers,
//     brokers.go, says how for each harness); the keys of the other
//     providers workforce knows (harness.ProviderKeyVar) are not passed in
//     at all;
//   - the hosts of the remote MCP servers of the user's own harness
//     configuration (harness.UserMCPServers) are always allowed, as the
//     harness's API is; a loopback one is served inside as a loopback
//     base URL is;
//   - each connection is recorded in <home>/results/<id>/network.jsonl
//     (NetworkLogFile), and a one-shot result carries the summary.

// DefaultProxyPort is the port of 127.0.0.1, inside the harness's network
// namespace, the proxy listens on: the next free one above it when a
// loopback port of the run takes it.
const DefaultProxyPort = 3128

// TestRootCAEnv names a PEM file of certificates the proxy trusts, besides
// the system's, for the upstream servers of the keys it brokers: a hook for
// tests, whose stand-in provider serves TLS on loopback.
const TestRootCAEnv = "WORKFORCE_TEST_ROOT_CA"

// netPlan is the network side of a run whose harness runs in namespaces.
type netPlan struct {
	policy    egress.Policy
	proxyPort int
	loopback  []int
	brokers   []egress.Broker
	// record is the file each connection is recorded in.
	record string
	// brokerURLs are the base URLs at the proxy codex and opencode take
	// from their arguments and configuration (harness.Options.BrokerURLs).
	brokerURLs map[string]string
	// opencodeKeys are the placeholders of the keys opencode's
	// configuration writes itself (harness.Options.OpencodeKeys).
	opencodeKeys map[string]string
	// helpers are key helpers run when the network starts, whose output
	// is brokered.
	helpers []keyHelper
	// env is the user's environment, the helpers'.
	env []string
}

// keyHelper is a command of the user's configuration printing an API key
// (claude's apiKeyHelper): run once, outside the sandbox, when the run's
// network starts, its output trimmed and brokered for the placeholder.
type keyHelper struct {
	provider, command, placeholder, upstream, origin string
}

// NetworkPlan is the resolved network of a run, as run --dry-run shows
// it: the mode, every entry of the allow list with its origin, the
// proxy's port inside, the loopback ports served inside, the keys
// brokered ("provider: origin", the origin a variable or a file and its
// field) and the keys left out (a variable's name, or a file's entry with
// why).
type NetworkPlan struct {
	Mode      string   `json:"mode"`
	Allow     []string `json:"allow,omitzero"`
	Always    []string `json:"always,omitzero"`
	ProxyPort int      `json:"proxyPort"`
	Loopback  []int    `json:"loopback,omitzero"`
	Brokered  []string `json:"brokered,omitzero"`
	Dropped   []string `json:"dropped,omitzero"`
}

// spec is s as egress reads it.
func (s NetSpec) spec() egress.Spec {
	sp := egress.Spec{Origin: s.Origin, Mode: s.Mode, Allow: s.Allow}
	if s.Presets != nil {
		sp.Presets = slices.Clone(*s.Presets)
		if sp.Presets == nil {
			sp.Presets = []string{}
		}
	}
	return sp
}

// planNetwork resolves the network of the run of harness h on model in
// namespaces, from its settings nw and the user's environment env, and
// returns env as the harness gets it: the proxy variables set, the keys
// it brokers replaced by placeholders and their base URLs pointed at the
// proxy, the other providers' keys left out. st, the run's per-session
// state (nil without one), gets the rewrites of its seeded files
// (planBrokers).
func planNetwork(nw *NetworkSettings, h, model string, env []string, record string, st *harnessState) (*netPlan, *NetworkPlan, []string, error) {
	src := egress.Sources{User: []egress.Spec{nw.User.spec()}}
	for _, n := range nw.Narrow {
		src.Narrow = append(src.Narrow, n.spec())
	}
	up, err := harness.ReadUserPolicy(h, env)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range up.AllowHosts {
		src.User = append(src.User, egress.Spec{Origin: e.Origin, Allow: []string{e.Value}})
	}
	always := func(rule, origin string) {
		if e, err := egress.NewEntry(rule, origin); err == nil {
			src.Always = append(src.Always, e)
		}
	}
	for _, host := range harness.RequiredHosts(h, model) {
		always(host, "harness "+h)
	}
	var loopback []int
	base := func(raw, origin string) {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		port := defaultPort(u)
		always(net.JoinHostPort(u.Hostname(), strconv.Itoa(port)), origin)
		if isLoopback(u.Hostname()) {
			loopback = append(loopback, port)
			// A rule names a name or an address, not both.
			always("127.0.0.1:"+strconv.Itoa(port), origin)
			always("localhost:"+strconv.Itoa(port), origin)
		}
	}
	get := envGetter(env)
	for _, k := range baseURLVars() {
		base(get(k), "$"+k)
	}
	for _, e := range up.BaseURLs {
		base(e.Value, e.Origin)
	}
	for _, e := range harness.UserMCPServers(h, env) {
		base(e.Value, e.Origin)
	}
	pol, err := egress.Resolve(src)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, e := range pol.Allow {
		if r := e.Rule; r.Port != 0 && (r.IP.IsValid() && r.IP.IsLoopback() || !r.Wildcard && r.Host == "localhost") {
			loopback = append(loopback, r.Port)
		}
	}
	slices.Sort(loopback)
	loopback = slices.Compact(loopback)
	port := DefaultProxyPort
	for slices.Contains(loopback, port) {
		port++
	}
	np := &netPlan{policy: pol, proxyPort: port, loopback: loopback, record: record}
	shown := &NetworkPlan{Mode: string(pol.Mode), ProxyPort: port, Loopback: loopback}
	for _, e := range pol.Allow {
		shown.Allow = append(shown.Allow, e.String())
	}
	for _, e := range pol.Always {
		shown.Always = append(shown.Always, e.String())
	}
	// The key helpers run outside, in the user's environment.
	np.env = slices.Clone(env)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	proxy := "http://" + addr
	for _, k := range harness.ProxyVars {
		env = setEnv(env, k, proxy)
	}
	env = dropEnv(env, func(k string) bool { return k == "NO_PROXY" || k == "no_proxy" })
	env, err = planBrokers(np, shown, st, h, addr, env, up)
	if err != nil {
		return nil, nil, nil, err
	}
	return np, shown, env, nil
}

// baseURLVars are the variables naming a base URL of a provider's API
// (harness.APIKeys).
func baseURLVars() []string {
	var out []string
	for _, ak := range harness.APIKeys {
		if isEnvName(ak.BaseURL) && !slices.Contains(out, ak.BaseURL) {
			out = append(out, ak.BaseURL)
		}
	}
	return append(out, "OPENAI_BASE_URL")
}

// isEnvName reports whether s is a variable's name rather than prose.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// defaultPort is u's port, or its scheme's.
func defaultPort(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}

// isLoopback reports whether host names the loopback.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// placeholder is a new placeholder key: recognisable, random.
func placeholder() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "workforce-placeholder-" + hex.EncodeToString(b)
}

// placeholderFor is a new placeholder for key that neither holds key nor
// is held by it (the broker refuses one that does: it puts the key in the
// placeholder's place and the placeholder in the key's). A short key can
// hide in the random part ("e2e" did, once in a few hundred runs) or in
// the prefix ("e"): then the placeholder is random letters and digits
// without the key's first character.
func placeholderFor(key string) string {
	for range 8 {
		if p := placeholder(); !strings.Contains(p, key) && !strings.Contains(key, p) {
			return p
		}
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	chars := strings.ReplaceAll(alphabet, key[:1], "")
	b := make([]byte, 40)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// envGetter returns a lookup of env's last value of each name.
func envGetter(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if name, v, ok := strings.Cut(env[i], "="); ok && name == k {
				return v
			}
		}
		return ""
	}
}

// dropEnv returns env without the variables drop says so of.
func dropEnv(env []string, drop func(string) bool) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return drop(k)
	})
}

// netHooks are what runHarness needs of a run's network: its plan (nil
// for a harness without namespaces) and who hears of each denial.
type netHooks struct {
	plan   *netPlan
	denied func(egress.Denial)
}

// netRun is the proxy of a run's harness while it runs.
type netRun struct {
	plan  *netPlan
	proxy *egress.Proxy
	wg    sync.WaitGroup
}

// startNetwork serves the listeners of the harness's namespaces with the
// proxy of plan np; deny gets each denial. It returns nil when np is nil
// or there are no listeners (the harness runs without namespaces).
func startNetwork(np *netPlan, listeners map[int]net.Listener, deny func(egress.Denial)) (*netRun, error) {
	if np == nil || len(listeners) == 0 {
		return nil, nil
	}
	helped, err := np.startHelpers()
	if err != nil {
		return nil, err
	}
	cfg := egress.Config{Policy: np.policy, Record: np.record, OnDeny: deny, Brokers: append(slices.Clone(np.brokers), helped...)}
	if f := os.Getenv(TestRootCAEnv); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", TestRootCAEnv, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(pem)
		cfg.RootCAs = pool
	}
	px, err := egress.New(cfg)
	if err != nil {
		return nil, err
	}
	nr := &netRun{plan: np, proxy: px}
	for port, l := range listeners {
		nr.wg.Add(1)
		go func() {
			defer nr.wg.Done()
			if port == np.proxyPort {
				_ = px.Serve(l)
			} else {
				_ = px.Forward(l, port)
			}
		}()
	}
	return nr, nil
}

// stop closes the proxy (and the listeners it serves) and returns what it
// saw.
func (nr *netRun) stop() *egress.Summary {
	if nr == nil {
		return nil
	}
	_ = nr.proxy.Close()
	nr.wg.Wait()
	s := nr.proxy.Summary()
	return &s
}
