package egress

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// TestHostsEnv names the test hook mapping host names to addresses: a
// comma-separated list of name=address:port or name=address
// ("api.example.test=127.0.0.1:4321,b.example.test=127.0.0.1"), read by
// New. A mapped name resolves to its address (and its port, when given,
// replaces the one asked for), and counts as public: it is not refused as
// loopback. There is no DNS offline; the acceptance tests use it to give
// the test's loopback servers names. workforce reads it from its own
// environment, which the agent cannot set.
const TestHostsEnv = "WORKFORCE_TEST_HOSTS"

// testHosts is TestHostsEnv's mapping: a name to an address and a port
// (0: the port asked for).
type testHosts map[string]netip.AddrPort

func parseTestHosts(s string) (testHosts, error) {
	if s == "" {
		return nil, nil
	}
	out := testHosts{}
	for _, item := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not name=address[:port]", TestHostsEnv, item)
		}
		host, err := NormalizeHost(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", TestHostsEnv, err)
		}
		if ap, err := netip.ParseAddrPort(addr); err == nil {
			out[host] = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
			continue
		}
		ip, err := netspec.ParseIP(addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not an address or address:port", TestHostsEnv, addr)
		}
		out[host] = netip.AddrPortFrom(ip, 0)
	}
	return out, nil
}

func testHostsFromEnv() (testHosts, error) { return parseTestHosts(os.Getenv(TestHostsEnv)) }

// extraSpecial are ranges refused as not public besides those netip's
// methods name (loopback 127/8 and ::1, link-local 169.254/16 and
// fe80::/10, private 10/8, 172.16/12, 192.168/16 and fc00::/7,
// unspecified, multicast).
var extraSpecial = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (carrier NAT, tailnets)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
}

// nat64 is the well-known NAT64 prefix: its addresses carry an IPv4
// address, checked as such.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Special returns what kind of address ip is when it is not a public
// one — "loopback", "link-local", "private", "unspecified", "multicast",
// "reserved" — and "" for a public address. An IPv4-mapped or NAT64
// address is judged by the IPv4 address it carries.
func Special(ip netip.Addr) string {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		return Special(netip.AddrFrom4([4]byte(b[12:16])))
	}
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast():
		return "multicast"
	}
	for _, p := range extraSpecial {
		if p.Contains(ip) {
			return "reserved"
		}
	}
	return ""
}
