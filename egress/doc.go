// Package egress is a run's way out to the network: the proxy workforce
// (unconfined) serves on a listening socket the launcher created inside
// the harness's network namespace, where loopback is the only interface.
// It holds the policy (which hosts a run may reach, and where each entry
// came from), the record of connections (network.jsonl and the one-shot
// result's summary), and the brokers that add the real API key to the
// harness's requests, so that the key never enters the sandbox.
//
// # The policy
//
// A Spec is a "network" object as config.json, a persona, a task or the
// flags give it: a mode (allowlist, the default; open; none), rules
// (ParseRule: "host", "*.suffix", "host:port", IP addresses, "[v6]:port")
// and presets (Presets: "dev", the default, the package registries and
// forges). Resolve folds the user's specs (config.json, then the flags:
// they may widen) and narrows by each spec an agent may have written (a
// persona, a task): there "none" wins, "open" changes nothing, an allow
// list intersects rule by rule. The always-allowed entries (the
// harness's own hosts, the user's MCP servers and base URLs) come from
// the caller with their origin, pass in every mode and are never
// narrowed. Policy.Entries lists all with their origins for --dry-run.
//
// # What the proxy checks
//
//   - CONNECT host:port, a plain HTTP request in absolute form (every
//     request of a kept-alive connection, not only the first), and the
//     brokers' paths under BrokerPrefix, in origin form or in absolute
//     form naming the proxy itself (what a harness whose HTTP_PROXY names
//     the proxy sends to its base URL). Anything else is refused with 400.
//     A CONNECT to the proxy itself (gemini's undici tunnels every
//     request, http:// ones too; codex its Responses websocket) is a
//     tunnel to the brokers' paths alone, neither recorded nor a denial:
//     nothing leaves by it. A websocket upgrade to a broker gets 403, no
//     denial either (codex then POSTs).
//   - The host by name against the policy; a denied request gets 403 with
//     a body naming the host and how to allow it (DenialMessage), a
//     record line and an OnDeny call.
//   - Every address the name resolves to, in every mode (open included):
//     loopback, link-local (169.254.0.0/16, the cloud metadata address,
//     and fe80::/10), private (10/8, 172.16/12, 192.168/16, fc00::/7),
//     unspecified, multicast and reserved ranges (Special) are refused
//     unless the user or an always-allowed entry names that host or
//     address by itself (a wildcard, a preset or a persona's rule does
//     not). The proxy dials the addresses it checked, never the name
//     again, so a name cannot resolve to a public address for the check
//     and a private one for the connection (DNS rebinding).
//   - A broker's request, in every mode (it is the harness's own API):
//     a placeholder key in the provider's slot (one of the provider's
//     keys: a broker may hold several, each with its placeholder, and
//     adds the key the request's placeholder stands for), a
//     path of the provider's table (Providers), a clean path (no dot
//     segment, encoded slash or empty segment), no upgrade, and, unless
//     the mode is open, a body that asks the provider to reach no other
//     server for the agent (server-side web search and fetch, remote MCP,
//     URLs to fetch; see checkBody's list). Such requests are refused
//     rather than stripped: a run that needs them runs with --network
//     open, where the provider may fetch what the agent could fetch
//     itself. The response streams (server-sent events pass as they
//     come) with the real key replaced by the placeholder, headers
//     included.
//
// # What it cannot check
//
//   - A tunnel's content: CONNECT passes opaque bytes to an allowed host
//     and port; whatever that host accepts (a git push, an upload to a
//     forge with a token the agent found) leaves. The read denial of the
//     user's tokens is what keeps that in.
//   - UDP, ICMP and DNS: inside the namespace they go nowhere (there is
//     no route), so nothing leaves by them, and a program that resolves
//     names itself instead of asking the proxy fails.
//   - Programs that ignore the proxy variables fail to connect rather
//     than escape.
//   - Hosts the policy allows are trusted with what the agent sends
//     them, the presets' forges and registries included.
//
// # Records
//
// Each connection (a tunnel, a forwarded port) or request (plain HTTP, a
// broker's) is appended to Config.Record as one JSON line (Record) when it
// ends, a denied one when it is refused; the file is created 0600 in a
// directory made 0700, and a line that cannot be written is counted
// (RecordFailures) without stopping the proxy. Summary aggregates them
// per host and port. The real key of a broker is never written: records
// hold hosts and ports, no URL or header.
//
// # The test hook
//
// TestHostsEnv maps host names to addresses for tests that have no DNS;
// a mapped name counts as public. Config.Resolver replaces the system's
// resolver in unit tests.
package egress
