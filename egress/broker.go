package egress

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// BrokerPrefix is the origin-form path under which the proxy serves the
// brokers: a harness's base URL is BaseURL's, and its requests come as
// "/_broker/<provider>/<the provider's path>".
const BrokerPrefix = "/_broker/"

// MaxBrokerBody is the largest request body a broker reads to check it.
const MaxBrokerBody = 64 << 20

// Route is one request a provider's broker forwards: a method and a path
// of segments, "*" standing for one segment and "*:verb" for a segment
// ending in ":verb" ("/v1beta/models/*:generateContent").
type Route struct {
	Method string
	Path   string
}

// Provider is how a provider's API takes its key and which of its paths
// a harness needs.
type Provider struct {
	// Name is the provider's name in BrokerPrefix's paths and Broker.
	Name string
	// Upstream is the API's root, the broker's default upstream.
	Upstream string
	// BasePath is what the harness's base URL adds to the provider's root
	// (openai's clients take the base URL with "/v1").
	BasePath string
	// Header is the header the real key is sent in; Bearer makes it
	// "Authorization: Bearer KEY".
	Header string
	Bearer bool
	// Slots are where a request may carry the placeholder: header names
	// ("authorization" with a "Bearer " value), and QueryKey, a query
	// parameter. The broker takes the placeholder out of all of them.
	Slots    []string
	QueryKey string
	// KeyEnv and BaseURLEnv name the variables the harnesses read the key
	// and the base URL from.
	KeyEnv     []string
	BaseURLEnv []string
	// Routes are the requests forwarded; any other is refused with 403.
	Routes []Route
}

// Providers is the brokers' table, from the providers' API references:
// Anthropic's Messages API (messages, count_tokens, models), OpenAI's
// Responses (with compact and input_tokens) and Chat Completions APIs and
// models, Gemini's generateContent, streamGenerateContent, countTokens,
// embedContent, batchEmbedContents and models, v1beta and v1. A
// Responses websocket (GET with Upgrade) is not forwarded: its frames
// could not be checked.
var Providers = []Provider{
	{
		Name:       "anthropic",
		Upstream:   "https://api.anthropic.com",
		Header:     "x-api-key",
		Slots:      []string{"x-api-key", "authorization"},
		KeyEnv:     []string{"ANTHROPIC_API_KEY"},
		BaseURLEnv: []string{"ANTHROPIC_BASE_URL"},
		Routes: []Route{
			{"POST", "/v1/messages"},
			{"POST", "/v1/messages/count_tokens"},
			{"GET", "/v1/models"},
			{"GET", "/v1/models/*"},
		},
	},
	{
		Name:       "openai",
		Upstream:   "https://api.openai.com",
		BasePath:   "/v1",
		Header:     "Authorization",
		Bearer:     true,
		Slots:      []string{"authorization"},
		KeyEnv:     []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		BaseURLEnv: []string{"OPENAI_BASE_URL"},
		Routes: []Route{
			{"POST", "/v1/responses"},
			{"POST", "/v1/responses/compact"},
			{"POST", "/v1/responses/input_tokens"},
			{"POST", "/v1/chat/completions"},
			{"GET", "/v1/models"},
			{"GET", "/v1/models/*"},
		},
	},
	{
		Name:       "gemini",
		Upstream:   "https://generativelanguage.googleapis.com",
		Header:     "x-goog-api-key",
		Slots:      []string{"x-goog-api-key"},
		QueryKey:   "key",
		KeyEnv:     []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		BaseURLEnv: []string{"GOOGLE_GEMINI_BASE_URL"},
		Routes:     geminiRoutes("v1beta", "v1"),
	},
}

func geminiRoutes(versions ...string) []Route {
	var out []Route
	for _, v := range versions {
		for _, verb := range []string{"generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"} {
			out = append(out, Route{"POST", "/" + v + "/models/*:" + verb})
		}
		out = append(out, Route{"GET", "/" + v + "/models"}, Route{"GET", "/" + v + "/models/*"})
	}
	return out
}

// ProviderNamed returns the row of Providers named name.
func ProviderNamed(name string) (Provider, bool) {
	for _, p := range Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// BaseURL is the base URL a harness is given for provider when the proxy
// listens on addr (host:port) inside its network namespace.
func BaseURL(addr, provider string) string {
	p, _ := ProviderNamed(provider)
	return "http://" + addr + BrokerPrefix + provider + p.BasePath
}

// Broker is an API key the proxy adds for the harness, which gets
// Placeholder instead of Key and BaseURL as its base URL. Several keys of
// one provider (one from the environment, one from a configuration file)
// are several Brokers with the same Provider and Upstream, each with a
// placeholder of its own: a request carries one of them, and the broker
// adds the key that placeholder stands for.
type Broker struct {
	// Provider is a name of Providers.
	Provider string
	// Key is the real key; it never appears in a response, a record or
	// an error.
	Key string
	// Placeholder is what the harness sends instead; a request without it
	// is refused.
	Placeholder string
	// Upstream is the https URL of the API's root; "" is the provider's.
	Upstream string
}

type broker struct {
	p         *Proxy
	prov      Provider
	keys      []keyPair
	upstream  *url.URL
	host      string
	port      int
	transport *http.Transport
}

// keyPair is a real key and the placeholder that stands for it.
type keyPair struct{ key, ph string }

func newBroker(p *Proxy, b Broker) (*broker, error) {
	prov, ok := ProviderNamed(b.Provider)
	if !ok {
		var names []string
		for _, p := range Providers {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("broker %q: unknown provider (known: %s)", b.Provider, strings.Join(names, ", "))
	}
	switch {
	case b.Key == "":
		return nil, fmt.Errorf("broker %s: no key", prov.Name)
	case len(b.Placeholder) < 8:
		return nil, fmt.Errorf("broker %s: the placeholder must be at least 8 characters", prov.Name)
	case strings.Contains(b.Key, b.Placeholder) || strings.Contains(b.Placeholder, b.Key):
		return nil, fmt.Errorf("broker %s: the placeholder must not hold the key, nor the key the placeholder", prov.Name)
	}
	raw := b.Upstream
	if raw == "" {
		raw = prov.Upstream
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("broker %s: upstream %q is not an https URL of a host (and a path)", prov.Name, raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	port := 443
	if ps := u.Port(); ps != "" {
		port, _ = strconv.Atoi(ps)
	}
	br := &broker{p: p, prov: prov, keys: []keyPair{{b.Key, b.Placeholder}}, upstream: u, host: u.Hostname(), port: port}
	br.transport = &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialUpstream,
		TLSClientConfig:       &tls.Config{RootCAs: p.cfg.RootCAs, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   p.cfg.DialTimeout,
		ExpectContinueTimeout: time.Second,
	}
	return br, nil
}

// dialUpstream dials a broker's upstream server: at the address the test
// hook maps its name to (TestHostsEnv), else as the system resolves it
// (the upstream is the provider's or the user's own base URL, never the
// agent's).
func (p *Proxy) dialUpstream(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: p.cfg.DialTimeout}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ap, ok := p.hosts[strings.ToLower(host)]; ok {
			if ap.Port() != 0 {
				port = strconv.Itoa(int(ap.Port()))
			}
			addr = net.JoinHostPort(ap.Addr().String(), port)
		}
	}
	return d.DialContext(ctx, network, addr)
}

// add adds the key of o, another Broker of the same provider, to b: the
// same upstream, a placeholder of its own that holds no key of b's nor
// is held by one.
func (b *broker) add(o *broker) error {
	if o.upstream.String() != b.upstream.String() {
		return fmt.Errorf("broker %s: given twice with different upstreams (%s, %s)", b.prov.Name, b.upstream, o.upstream)
	}
	kp := o.keys[0]
	for _, have := range b.keys {
		if have.key == kp.key && have.ph == kp.ph {
			return nil
		}
		if strings.Contains(have.key, kp.ph) || strings.Contains(kp.ph, have.key) || strings.Contains(kp.key, have.ph) ||
			strings.Contains(have.ph, kp.key) || strings.Contains(have.ph, kp.ph) || strings.Contains(kp.ph, have.ph) {
			return fmt.Errorf("broker %s: two keys' placeholders must be distinct and hold no key", b.prov.Name)
		}
	}
	b.keys = append(b.keys, kp)
	return nil
}

// scrub replaces each real key in s by its placeholder.
func (b *broker) scrub(s string) string {
	for _, kp := range b.keys {
		s = strings.ReplaceAll(s, kp.key, kp.ph)
	}
	return s
}

// refuse answers a broker request with status and a message, records it
// as denied and tells OnDeny.
func (b *broker) refuse(w http.ResponseWriter, start time.Time, status int, reason string) {
	b.p.denied(start, b.host, b.port, reason, "broker "+b.prov.Name)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Workforce-Denied", "broker")
	w.WriteHeader(status)
	fmt.Fprintf(w, "workforce: the %s broker refused this request: %s.\n", b.prov.Name, reason)
}

func (p *Proxy) serveBroker(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rest := strings.TrimPrefix(r.URL.EscapedPath(), BrokerPrefix)
	name, rel, _ := strings.Cut(rest, "/")
	b := p.brokers[name]
	if b == nil {
		http.Error(w, fmt.Sprintf("workforce proxy: no broker for %q in this run", name), http.StatusNotFound)
		return
	}
	rel = "/" + rel
	kp, ok := b.placeholder(r)
	if !ok {
		b.refuse(w, start, http.StatusForbidden, "the request does not carry the run's placeholder key")
		return
	}
	if r.Header.Get("Upgrade") != "" {
		// A protocol the broker does not carry, whose frames it could not
		// check: nothing leaves, so no denial (codex tries its Responses
		// websocket, then POSTs).
		w.Header().Set("X-Workforce-Denied", "broker")
		http.Error(w, "workforce: the "+b.prov.Name+" broker refused this request: a connection upgrade (websocket) is not forwarded.", http.StatusForbidden)
		return
	}
	if why := cleanPath(rel); why != "" {
		b.refuse(w, start, http.StatusForbidden, "path "+rel+": "+why)
		return
	}
	if !b.prov.allows(r.Method, rel) {
		b.refuse(w, start, http.StatusForbidden, r.Method+" "+rel+" is not one of the "+b.prov.Name+" API paths the broker forwards")
		return
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, MaxBrokerBody+1))
		if err != nil {
			http.Error(w, "workforce proxy: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > MaxBrokerBody {
			b.refuse(w, start, http.StatusRequestEntityTooLarge, fmt.Sprintf("a request body over %d MiB is not checked nor forwarded", MaxBrokerBody>>20))
			return
		}
	}
	if p.cfg.Policy.Mode != Open && len(body) > 0 {
		if why := checkBody(r.Header.Get("Content-Encoding"), body); why != "" {
			b.refuse(w, start, http.StatusForbidden, why)
			return
		}
	}
	var down *countingBody
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			out := pr.Out
			u := *b.upstream
			u.Path = b.upstream.Path + pathUnescape(rel)
			u.RawPath = b.upstream.Path + rel
			q := pr.In.URL.Query()
			if b.prov.QueryKey != "" {
				q.Del(b.prov.QueryKey)
			}
			u.RawQuery = q.Encode()
			if len(q) == 0 {
				u.RawQuery = ""
			}
			out.URL = &u
			out.Host = u.Host
			for _, s := range b.prov.Slots {
				out.Header.Del(s)
			}
			out.Header.Del(b.prov.Header)
			if b.prov.Bearer {
				out.Header.Set(b.prov.Header, "Bearer "+kp.key)
			} else {
				out.Header.Set(b.prov.Header, kp.key)
			}
			// The response must be readable to be scrubbed: the transport
			// asks for gzip itself and decodes it.
			out.Header.Del("Accept-Encoding")
			out.Body = io.NopCloser(bytes.NewReader(body))
			out.ContentLength = int64(len(body))
			if len(body) == 0 {
				out.Body = http.NoBody
			}
			out.GetBody = nil
		},
		Transport:     b.transport,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			for _, vs := range resp.Header {
				for i, v := range vs {
					vs[i] = b.scrub(v)
				}
			}
			resp.Header.Del("Content-Length")
			resp.ContentLength = -1
			body := resp.Body
			for _, kp := range b.keys {
				body = &scrubber{r: body, old: []byte(kp.key), new: []byte(kp.ph)}
			}
			down = &countingBody{ReadCloser: body}
			resp.Body = down
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			failed = err
			http.Error(w, "workforce proxy: the "+b.prov.Name+" API did not answer: "+b.scrub(err.Error()), http.StatusBadGateway)
		},
		ErrorLog: p.srv.ErrorLog,
	}
	rp.ServeHTTP(w, r)
	rec := Record{Time: start, Host: b.host, Port: b.port, Via: "broker " + b.prov.Name, Allowed: true, Up: int64(len(body)), Down: down.count()}
	if failed != nil {
		rec.Error = b.scrub(failed.Error())
	}
	p.rec.add(rec)
}

func pathUnescape(p string) string {
	u, err := url.PathUnescape(p)
	if err != nil {
		return p
	}
	return u
}

// placeholder returns the key pair whose placeholder r carries in one of
// the provider's slots; false when it carries none, or any other value in
// a slot (another key's placeholder included).
func (b *broker) placeholder(r *http.Request) (keyPair, bool) {
	found := -1
	check := func(v string) bool {
		for i, kp := range b.keys {
			if subtle.ConstantTimeCompare([]byte(v), []byte(kp.ph)) == 1 && (found < 0 || found == i) {
				found = i
				return true
			}
		}
		return false
	}
	for _, s := range b.prov.Slots {
		for _, v := range r.Header.Values(s) {
			if strings.EqualFold(s, "authorization") {
				if len(v) < 7 || !strings.EqualFold(v[:7], "bearer ") {
					return keyPair{}, false
				}
				v = v[7:]
			}
			if !check(v) {
				return keyPair{}, false
			}
		}
	}
	if b.prov.QueryKey != "" {
		for _, v := range r.URL.Query()[b.prov.QueryKey] {
			if !check(v) {
				return keyPair{}, false
			}
		}
	}
	if found < 0 {
		return keyPair{}, false
	}
	return b.keys[found], true
}

// cleanPath says what is wrong with an escaped request path, or "".
func cleanPath(p string) string {
	low := strings.ToLower(p)
	switch {
	case strings.Contains(low, "%2f"), strings.Contains(low, "%5c"), strings.Contains(p, `\`):
		return "an encoded slash or a backslash"
	case strings.Contains(low, "%2e"):
		return "an encoded dot"
	case strings.Contains(p, "//"):
		return "an empty segment"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return "a dot segment"
		}
	}
	return ""
}

// allows reports whether a route of the table matches method and the
// escaped path.
func (prov Provider) allows(method, path string) bool {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, rt := range prov.Routes {
		if rt.Method == method && matchRoute(strings.Split(strings.TrimPrefix(rt.Path, "/"), "/"), segs) {
			return true
		}
	}
	return false
}

func matchRoute(pattern, segs []string) bool {
	if len(pattern) != len(segs) {
		return false
	}
	for i, p := range pattern {
		s := segs[i]
		switch {
		case p == "*":
			if s == "" || strings.Contains(s, ":") {
				return false
			}
		case strings.HasPrefix(p, "*:"):
			head, ok := strings.CutSuffix(s, p[1:])
			if !ok || head == "" || strings.Contains(head, ":") {
				return false
			}
		case p != s:
			return false
		}
	}
	return true
}

// checkBody says why a request body must not reach the provider while
// the run's network is not open, or "": a body that is not plain JSON
// (compressed, malformed, with a member name twice: the provider might
// read it otherwise than the check), or one asking the provider to reach
// other servers for the agent. The checks are the same for every
// provider:
//
//   - a top-level "mcp_servers" (Anthropic's remote MCP) or
//     "web_search_options" (OpenAI's Chat Completions search);
//   - an entry of "tools" whose "type" starts with "web_search" or
//     "web_fetch" (Anthropic's server tools, OpenAI's web search; but an
//     OpenAI web_search with "external_web_access": false, which reads
//     OpenAI's cache and fetches nothing), or is "mcp" (OpenAI's remote
//     MCP), or that holds googleSearch, googleSearchRetrieval, urlContext
//     or enterpriseWebSearch (Gemini's grounding tools; snake_case too);
//   - anywhere, a "url", "image_url", "file_url", "fileUri", "file_uri"
//     or "server_url" member whose value is an http or https URL: the
//     provider would fetch it (a data: URL is content, and passes).
//
// Names are compared without regard to case.
func checkBody(encoding string, body []byte) string {
	if encoding != "" && !strings.EqualFold(encoding, "identity") {
		return "a request body with Content-Encoding " + encoding + " cannot be checked"
	}
	var v any
	if err := jsonv2.Unmarshal(body, &v); err != nil {
		return "the request body is not JSON the broker can check (a member name twice is refused): " + err.Error()
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for k, val := range obj {
		switch {
		case strings.EqualFold(k, "mcp_servers"):
			if val != nil {
				return "\"mcp_servers\" asks the provider to reach MCP servers for the agent; only --network open lets it through"
			}
		case strings.EqualFold(k, "web_search_options"):
			if val != nil {
				return "\"web_search_options\" asks the provider to search the web for the agent; only --network open lets it through"
			}
		case strings.EqualFold(k, "tools"):
			if why := checkTools(val); why != "" {
				return why
			}
		}
	}
	if where := findURL(v, ""); where != "" {
		return where + " is a URL the provider would fetch for the agent; only --network open lets it through"
	}
	return ""
}

var geminiServerTools = []string{"googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval", "urlContext", "url_context", "enterpriseWebSearch", "enterprise_web_search"}

func checkTools(val any) string {
	tools, ok := val.([]any)
	if !ok {
		return ""
	}
	for i, t := range tools {
		tool, ok := t.(map[string]any)
		if !ok {
			continue
		}
		for k, v := range tool {
			for _, g := range geminiServerTools {
				if strings.EqualFold(k, g) && v != nil {
					return fmt.Sprintf("tools[%d] %s asks the provider to reach the web for the agent; only --network open lets it through", i, k)
				}
			}
			if !strings.EqualFold(k, "type") {
				continue
			}
			typ, _ := v.(string)
			low := strings.ToLower(typ)
			switch {
			case low == "web_search" && externalAccessOff(tool):
				// OpenAI's cached search: nothing is fetched for the agent.
			case strings.HasPrefix(low, "web_search"), strings.HasPrefix(low, "web_fetch"), low == "mcp":
				return fmt.Sprintf("tools[%d] of type %q asks the provider to reach other servers for the agent; only --network open lets it through", i, typ)
			}
		}
	}
	return ""
}

// externalAccessOff reports whether an OpenAI web_search tool is limited
// to OpenAI's cache.
func externalAccessOff(tool map[string]any) bool {
	for k, v := range tool {
		if strings.EqualFold(k, "external_web_access") {
			b, ok := v.(bool)
			return ok && !b
		}
	}
	return false
}

var urlMembers = []string{"url", "image_url", "file_url", "fileUri", "file_uri", "server_url"}

// findURL returns where in v a URL member holds an http(s) URL, or "".
func findURL(v any, at string) string {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok {
				low := strings.ToLower(strings.TrimSpace(s))
				if strings.HasPrefix(low, "http://") || strings.HasPrefix(low, "https://") || strings.HasPrefix(low, "//") {
					for _, m := range urlMembers {
						if strings.EqualFold(k, m) {
							return at + "." + k
						}
					}
				}
			}
			if w := findURL(val, at+"."+k); w != "" {
				return w
			}
		}
	case []any:
		for i, val := range x {
			if w := findURL(val, at+"["+strconv.Itoa(i)+"]"); w != "" {
				return w
			}
		}
	}
	return ""
}

// scrubber streams a response body with every occurrence of old replaced
// by new, holding back only a tail that could begin an occurrence, so
// that a streamed event is passed on as soon as it comes.
type scrubber struct {
	r        io.ReadCloser
	old, new []byte
	buf      []byte
	out      []byte
	held     []byte
	err      error
}

func (s *scrubber) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			if len(s.held) > 0 {
				s.out, s.held = s.held, nil
				break
			}
			return 0, s.err
		}
		if s.buf == nil {
			s.buf = make([]byte, 32<<10)
		}
		n, err := s.r.Read(s.buf)
		s.err = err
		if n == 0 && err == nil {
			continue
		}
		data := bytes.ReplaceAll(append(s.held, s.buf[:n]...), s.old, s.new)
		k := partialTail(data, s.old)
		s.out, s.held = data[:len(data)-k], bytes.Clone(data[len(data)-k:])
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *scrubber) Close() error { return s.r.Close() }

// partialTail returns the length of the longest tail of data that is a
// proper prefix of key.
func partialTail(data, key []byte) int {
	max := min(len(key)-1, len(data))
	for k := max; k > 0; k-- {
		if bytes.HasPrefix(key, data[len(data)-k:]) {
			return k
		}
	}
	return 0
}
