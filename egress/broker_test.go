package egress

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

const (
	realKey     = "sk-real-0123456789abcdef"
	placeholder = "workforce-placeholder-key"
)

// upstream is a provider's test server: it keeps what it received.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, r)
		u.body = append(u.body, b)
		u.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) received() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.reqs...)
}

func (u *upstream) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(u.Certificate())
	return p
}

// startBroker serves a proxy brokering provider to up, in mode.
func startBroker(t *testing.T, provider string, up *upstream, mode Mode, record string) (*Proxy, string) {
	t.Helper()
	return startProxy(t, Config{
		Policy:  mustPolicy(t, Sources{User: []Spec{{Origin: "--network", Mode: string(mode)}}}),
		Brokers: []Broker{{Provider: provider, Key: realKey, Placeholder: placeholder, Upstream: up.URL}},
		RootCAs: up.pool(),
		Record:  record,
	})
}

func send(t *testing.T, method, url string, hdr map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestBrokerForwards: a request on a table path with the placeholder
// reaches the provider with the real key in the provider's header (and
// no placeholder anywhere), the response comes back, and the record
// holds no key.
func TestBrokerForwards(t *testing.T) {
	tests := []struct {
		provider, path string
		hdr            map[string]string
		header, want   string // where the upstream must find the key
	}{
		{"anthropic", "/v1/messages?beta=true", map[string]string{"x-api-key": placeholder}, "X-Api-Key", realKey},
		{"anthropic", "/v1/messages/count_tokens", map[string]string{"Authorization": "Bearer " + placeholder}, "X-Api-Key", realKey},
		{"openai", "/v1/responses", map[string]string{"Authorization": "Bearer " + placeholder}, "Authorization", "Bearer " + realKey},
		{"openai", "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + placeholder}, "Authorization", "Bearer " + realKey},
		{"gemini", "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", map[string]string{"x-goog-api-key": placeholder}, "X-Goog-Api-Key", realKey},
		{"gemini", "/v1beta/models/gemini-2.5-pro:generateContent?key=" + placeholder, nil, "X-Goog-Api-Key", realKey},
	}
	for _, tt := range tests {
		t.Run(tt.provider+tt.path, func(t *testing.T) {
			up := newUpstream(t, nil)
			record := filepath.Join(t.TempDir(), "network.jsonl")
			px, addr := startBroker(t, tt.provider, up, Allowlist, record)
			prov, _ := ProviderNamed(tt.provider)
			url := BaseURL(addr, tt.provider) + strings.TrimPrefix(tt.path, prov.BasePath)
			resp, body := send(t, "POST", url, tt.hdr, `{"model":"m","messages":[]}`)
			if resp.StatusCode != 200 || body != `{"ok":true}` {
				t.Fatalf("POST %s got %d %q", url, resp.StatusCode, body)
			}
			reqs := up.received()
			if len(reqs) != 1 {
				t.Fatalf("the provider got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if got := r.Header.Get(tt.header); got != tt.want {
				t.Errorf("the provider's %s = %q, want %q", tt.header, got, tt.want)
			}
			wantPath, _, _ := strings.Cut(tt.path, "?")
			if r.URL.Path != wantPath {
				t.Errorf("the provider got path %q, want %q", r.URL.Path, wantPath)
			}
			if r.URL.Query().Has("key") {
				t.Errorf("the provider got a key in the query: %q", r.URL.RawQuery)
			}
			if strings.Contains(tt.path, "alt=sse") && r.URL.Query().Get("alt") != "sse" {
				t.Errorf("the query %q lost alt=sse", r.URL.RawQuery)
			}
			for k, vs := range r.Header {
				for _, v := range vs {
					if strings.Contains(v, placeholder) {
						t.Errorf("the provider got the placeholder in %s", k)
					}
				}
			}
			px.Close()
			data, _ := os.ReadFile(record)
			if strings.Contains(string(data), realKey) || !strings.Contains(string(data), `"via":"broker `+tt.provider+`"`) {
				t.Errorf("the record %q holds the key or lacks the broker's line", data)
			}
		})
	}
}

// TestBrokerRefuses: no placeholder, a wrong one, a path outside the
// table, a tricky path, a server tool under allowlist: 403 naming why, and
// the provider never reached.
func TestBrokerRefuses(t *testing.T) {
	ph := map[string]string{"x-api-key": placeholder}
	tests := []struct {
		name, method, path string
		hdr                map[string]string
		body, want         string
	}{
		{"no placeholder", "POST", "/v1/messages", nil, `{}`, "does not carry the run's placeholder key"},
		{"the real key", "POST", "/v1/messages", map[string]string{"x-api-key": realKey}, `{}`, "placeholder"},
		{"placeholder and another key", "POST", "/v1/messages", map[string]string{"x-api-key": placeholder, "Authorization": "Bearer other"}, `{}`, "placeholder"},
		{"outside the table", "POST", "/v1/files", ph, `{}`, "POST /v1/files is not one of the anthropic API paths"},
		{"wrong method", "DELETE", "/v1/models/x", ph, ``, "DELETE /v1/models/x is not one of"},
		{"dot segment", "POST", "/v1/messages/%2e%2e/files", ph, `{}`, "encoded dot"},
		{"encoded slash", "GET", "/v1/models/a%2fb", ph, ``, "encoded slash"},
		{"web search", "POST", "/v1/messages", ph, `{"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, `tools[0] of type "web_search_20250305"`},
		{"web fetch", "POST", "/v1/messages", ph, `{"tools":[{"name":"Bash"},{"type":"web_fetch_20250910"}]}`, `tools[1] of type "web_fetch_20250910"`},
		{"mcp servers", "POST", "/v1/messages", ph, `{"mcp_servers":[{"type":"url","url":"https://evil.test/mcp"}]}`, `"mcp_servers"`},
		{"url source", "POST", "/v1/messages", ph, `{"messages":[{"content":[{"type":"image","source":{"type":"url","url":"https://evil.test/?secret=1"}}]}]}`, ".messages[0].content[0].source.url is a URL"},
		{"duplicate names", "POST", "/v1/messages", ph, `{"tools":[],"tools":[{"type":"web_search_20250305"}]}`, "a member name twice"},
		{"not JSON", "POST", "/v1/messages", ph, `tools=web_search`, "not JSON"},
	}
	up := newUpstream(t, nil)
	var denials []Denial
	var mu sync.Mutex
	_, addr := startProxy(t, Config{
		Policy:  mustPolicy(t, Sources{}),
		Brokers: []Broker{{Provider: "anthropic", Key: realKey, Placeholder: placeholder, Upstream: up.URL}},
		RootCAs: up.pool(),
		OnDeny:  func(d Denial) { mu.Lock(); denials = append(denials, d); mu.Unlock() },
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, tt.method, "http://"+addr+"/_broker/anthropic"+tt.path, tt.hdr, tt.body)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, tt.want) {
				t.Errorf("got %d %q, want 403 with %q", resp.StatusCode, body, tt.want)
			}
			if strings.Contains(body, realKey) {
				t.Errorf("the refusal shows the key: %q", body)
			}
		})
	}
	if n := len(up.received()); n != 0 {
		t.Errorf("the provider was reached %d times by refused requests", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denials) != len(tests) || denials[0].Via != "broker anthropic" || denials[0].Port != 443 && denials[0].Port == 0 {
		t.Errorf("OnDeny heard %d denials (%+v), want %d by broker anthropic", len(denials), denials, len(tests))
	}
	resp, _ := send(t, "POST", "http://"+addr+"/_broker/openai/v1/responses", map[string]string{"Authorization": "Bearer " + placeholder}, `{}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a provider without a broker got %d, want 404", resp.StatusCode)
	}
}

// TestBrokerServerToolsOpen: under --network open the provider may reach
// other servers for the agent: the same web search request passes.
func TestBrokerServerToolsOpen(t *testing.T) {
	up := newUpstream(t, nil)
	_, addr := startBroker(t, "anthropic", up, Open, "")
	resp, body := send(t, "POST", "http://"+addr+"/_broker/anthropic/v1/messages", map[string]string{"x-api-key": placeholder},
		`{"tools":[{"type":"web_search_20250305","name":"web_search"}]}`)
	if resp.StatusCode != 200 {
		t.Errorf("under open a server tool got %d %q, want 200", resp.StatusCode, body)
	}
}

// TestBrokerStreams: server-sent events reach the harness as they come,
// before the provider ends its response.
func TestBrokerStreams(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"a\":1}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "event: message_stop\ndata: {}\n\n")
	})
	defer close(release)
	_, addr := startBroker(t, "anthropic", up, Allowlist, "")
	req, _ := http.NewRequest("POST", "http://"+addr+"/_broker/anthropic/v1/messages", strings.NewReader(`{"stream":true}`))
	req.Header.Set("x-api-key", placeholder)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		br := bufio.NewReader(resp.Body)
		var b strings.Builder
		for {
			line, err := br.ReadString('\n')
			b.WriteString(line)
			if err != nil || line == "\n" {
				break
			}
		}
		first <- b.String()
	}()
	select {
	case got := <-first:
		if got != "event: message_start\ndata: {\"a\":1}\n\n" {
			t.Errorf("the first event came as %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first event did not arrive before the provider ended: the broker buffers")
	}
}

// TestBrokerScrubsKey: a provider echoing the key (in the body, split
// across writes, and in a header) shows the placeholder instead.
func TestBrokerScrubsKey(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", "key="+r.Header.Get("x-api-key"))
		io.WriteString(w, `{"error":"bad key `+realKey[:5])
		w.(http.Flusher).Flush()
		io.WriteString(w, realKey[5:]+`", "again":"`+realKey+`"}`)
	})
	_, addr := startBroker(t, "anthropic", up, Allowlist, "")
	resp, body := send(t, "POST", "http://"+addr+"/_broker/anthropic/v1/messages", map[string]string{"x-api-key": placeholder}, `{}`)
	if strings.Contains(body, realKey) || strings.Count(body, placeholder) != 2 {
		t.Errorf("the response body %q shows the key or lost a placeholder", body)
	}
	if h := resp.Header.Get("X-Echo"); h != "key="+placeholder {
		t.Errorf("the response header X-Echo = %q", h)
	}
}

func TestScrubber(t *testing.T) {
	key := []byte("sk-secret")
	tests := []struct{ in, want string }{
		{"no key here", "no key here"},
		{"sk-secret", "PH"},
		{"a sk-secret b sk-secret", "a PH b PH"},
		{"sk-sk-secret", "sk-PH"},
		{"ends with sk-se", "ends with sk-se"},
		{"sk-secresk-secret", "sk-secrePH"},
	}
	for _, tt := range tests {
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(tt.in), "byte by byte": iotest.OneByteReader(strings.NewReader(tt.in))} {
			s := &scrubber{r: io.NopCloser(r), old: key, new: []byte("PH")}
			got, err := io.ReadAll(s)
			if err != nil || string(got) != tt.want {
				t.Errorf("%s: scrub(%q) = %q, %v; want %q", name, tt.in, got, err, tt.want)
			}
		}
	}
}

func TestCheckBody(t *testing.T) {
	tests := []struct {
		name, body, want string // want "" when it passes
	}{
		{"plain", `{"model":"m","messages":[{"role":"user","content":"see https://example.com"}]}`, ""},
		{"function tools", `{"tools":[{"type":"function","name":"web_search"},{"name":"Bash","input_schema":{}}]}`, ""},
		{"data url", `{"input":[{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]}`, ""},
		{"openai cached search", `{"tools":[{"type":"web_search","external_web_access":false}]}`, ""},
		{"openai live search", `{"tools":[{"type":"web_search"}]}`, `"web_search"`},
		{"openai live search, access on", `{"tools":[{"type":"web_search","external_web_access":true}]}`, `"web_search"`},
		{"openai preview search", `{"tools":[{"type":"web_search_preview"}]}`, "web_search_preview"},
		{"openai mcp", `{"tools":[{"type":"mcp","server_url":"https://x.test"}]}`, `"mcp"`},
		{"openai case", `{"TOOLS":[{"Type":"Web_Search_Preview"}]}`, "Web_Search_Preview"},
		{"chat search options", `{"web_search_options":{}}`, "web_search_options"},
		{"openai image url", `{"input":[{"type":"input_image","image_url":"https://evil.test/x.png"}]}`, "image_url is a URL"},
		{"chat image url", `{"messages":[{"content":[{"type":"image_url","image_url":{"url":"HTTPS://evil.test"}}]}]}`, "image_url.url is a URL"},
		{"openai file url", `{"input":[{"type":"input_file","file_url":"http://evil.test/a.pdf"}]}`, "file_url is a URL"},
		{"gemini search", `{"tools":[{"googleSearch":{}}]}`, "googleSearch"},
		{"gemini url context", `{"tools":[{"url_context":{}}]}`, "url_context"},
		{"gemini retrieval", `{"tools":[{"functionDeclarations":[]},{"googleSearchRetrieval":{}}]}`, "tools[1] googleSearchRetrieval"},
		{"gemini file uri", `{"contents":[{"parts":[{"fileData":{"fileUri":"https://evil.test/v"}}]}]}`, "fileUri is a URL"},
		{"anthropic mcp", `{"mcp_servers":[]}`, "mcp_servers"},
		{"duplicate", `{"a":1,"a":2}`, "twice"},
		{"invalid utf-8", "{\"a\":\"\xff\"}", "not JSON"},
		{"array", `[1,2]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkBody("", []byte(tt.body))
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("checkBody(%s) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
	if got := checkBody("gzip", []byte("x")); !strings.Contains(got, "Content-Encoding gzip") {
		t.Errorf("a gzip body: %q", got)
	}
}

func TestProviderRoutes(t *testing.T) {
	tests := []struct {
		provider, method, path string
		want                   bool
	}{
		{"anthropic", "POST", "/v1/messages", true},
		{"anthropic", "POST", "/v1/messages/count_tokens", true},
		{"anthropic", "GET", "/v1/models/claude-x", true},
		{"anthropic", "GET", "/v1/models/a/b", false},
		{"anthropic", "POST", "/v1/messages/batches", false},
		{"anthropic", "GET", "/v1/messages", false},
		{"openai", "POST", "/v1/responses", true},
		{"openai", "POST", "/v1/responses/compact", true},
		{"openai", "POST", "/v1/chat/completions", true},
		{"openai", "GET", "/v1/responses", false},
		{"openai", "POST", "/v1/files", false},
		{"openai", "POST", "/v1/images/generations", false},
		{"gemini", "POST", "/v1beta/models/gemini-2.5-pro:generateContent", true},
		{"gemini", "POST", "/v1/models/gemini-2.5-pro:countTokens", true},
		{"gemini", "POST", "/v1beta/models/:generateContent", false},
		{"gemini", "POST", "/v1beta/models/a:b:generateContent", false},
		{"gemini", "POST", "/v1beta/files", false},
		{"gemini", "POST", "/v1beta/models/gemini:predict", false},
		{"gemini", "GET", "/v1beta/models", true},
	}
	for _, tt := range tests {
		prov, _ := ProviderNamed(tt.provider)
		if got := prov.allows(tt.method, tt.path); got != tt.want {
			t.Errorf("%s allows %s %s = %v, want %v", tt.provider, tt.method, tt.path, got, tt.want)
		}
	}
}

func TestNewBrokerErrors(t *testing.T) {
	tests := []struct {
		b    Broker
		want string
	}{
		{Broker{Provider: "acme", Key: realKey, Placeholder: placeholder}, `broker "acme": unknown provider`},
		{Broker{Provider: "openai", Placeholder: placeholder}, "no key"},
		{Broker{Provider: "openai", Key: realKey, Placeholder: "short"}, "at least 8"},
		{Broker{Provider: "openai", Key: realKey, Placeholder: realKey + "x"}, "must not hold the key"},
		{Broker{Provider: "openai", Key: realKey, Placeholder: placeholder, Upstream: "http://api.openai.com"}, "not an https URL"},
	}
	for _, tt := range tests {
		_, err := New(Config{Brokers: []Broker{tt.b}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New with %+v = %v, want an error with %q", tt.b, err, tt.want)
		}
		if err != nil && tt.b.Key != "" && strings.Contains(err.Error(), tt.b.Key) {
			t.Errorf("the error %q shows the key", err)
		}
	}
	twice := []struct {
		name string
		b    []Broker
		want string
	}{
		{"other upstream", []Broker{{Provider: "openai", Key: realKey, Placeholder: placeholder}, {Provider: "openai", Key: "sk-other-key-0001", Placeholder: placeholder + "-2", Upstream: "https://gw.example/v1"}}, "different upstreams"},
		{"placeholder holds a key", []Broker{{Provider: "openai", Key: realKey, Placeholder: placeholder}, {Provider: "openai", Key: "sk-other-key-0001", Placeholder: "x-" + realKey}}, "distinct"},
		{"same placeholder", []Broker{{Provider: "openai", Key: realKey, Placeholder: placeholder}, {Provider: "openai", Key: "sk-other-key-0001", Placeholder: placeholder}}, "distinct"},
	}
	for _, tt := range twice {
		_, err := New(Config{Brokers: tt.b})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// TestBrokerTwoKeys: two keys of one provider (the environment's and a
// configuration file's), each with its placeholder: the provider gets the
// key the request's placeholder stands for, a request carrying both
// placeholders is refused, and neither key comes back in a response.
func TestBrokerTwoKeys(t *testing.T) {
	const key2, ph2 = "sk-second-key-77777777", "workforce-placeholder-two"
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "echo "+r.Header.Get("Authorization"))
	})
	_, addr := startProxy(t, Config{
		Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "--network", Mode: string(Allowlist)}}}),
		Brokers: []Broker{
			{Provider: "openai", Key: realKey, Placeholder: placeholder, Upstream: up.URL},
			{Provider: "openai", Key: key2, Placeholder: ph2, Upstream: up.URL},
		},
		RootCAs: up.pool(),
	})
	url := BaseURL(addr, "openai") + "/responses"
	for _, tt := range []struct{ ph, key string }{{placeholder, realKey}, {ph2, key2}} {
		resp, body := send(t, "POST", url, map[string]string{"Authorization": "Bearer " + tt.ph}, `{}`)
		if resp.StatusCode != 200 || body != "echo Bearer "+tt.ph {
			t.Errorf("with %s: %d %q, want 200 and the key scrubbed back to the placeholder", tt.ph, resp.StatusCode, body)
		}
		reqs := up.received()
		if got := reqs[len(reqs)-1].Header.Get("Authorization"); got != "Bearer "+tt.key {
			t.Errorf("with %s the provider got %q, want the key it stands for", tt.ph, got)
		}
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader("{}"))
	req.Header.Add("Authorization", "Bearer "+placeholder)
	req.Header.Add("Authorization", "Bearer "+ph2)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("both placeholders: %d, want 403", resp.StatusCode)
	}
}

// TestBrokerUpstreamDown: a provider that does not answer gives 502
// without the key, and the record says so.
func TestBrokerUpstreamDown(t *testing.T) {
	up := newUpstream(t, nil)
	up.Close()
	px, addr := startBroker(t, "openai", up, Allowlist, "")
	resp, body := send(t, "POST", "http://"+addr+"/_broker/openai/v1/responses", map[string]string{"Authorization": "Bearer " + placeholder}, `{}`)
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(body, realKey) || !strings.Contains(body, "openai") {
		t.Errorf("got %d %q, want 502 naming openai without the key", resp.StatusCode, body)
	}
	if !bytes.Contains([]byte(body), []byte("did not answer")) {
		t.Errorf("body %q", body)
	}
	_ = px
}

// chunkReader returns its data in pieces of the given sizes, in turn.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%7 + 1
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzScrubber: however the body is cut, the scrubbed stream is the body
// with every key replaced, as if replaced whole, and never holds the key.
func FuzzScrubber(f *testing.F) {
	f.Add([]byte("a sk-secret b"), []byte{1, 2, 3}, "sk-secret")
	f.Add([]byte("sk-sk-secresk-secret"), []byte{0}, "sk-secret")
	f.Add([]byte("aaaa"), []byte{5}, "aa")
	f.Fuzz(func(t *testing.T, body, sizes []byte, key string) {
		if len(key) < 2 || strings.Contains("PH", key) || strings.Contains(key, "P") || strings.Contains(key, "H") {
			return
		}
		s := &scrubber{r: io.NopCloser(&chunkReader{data: bytes.Clone(body), sizes: sizes}), old: []byte(key), new: []byte("PH")}
		got, err := io.ReadAll(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.ReplaceAll(body, []byte(key), []byte("PH")); !bytes.Equal(got, want) {
			t.Fatalf("scrub(%q) in pieces %v = %q, want %q", body, sizes, got, want)
		}
	})
}

// TestBrokerThroughProxyVariables: a harness whose HTTP_PROXY names the
// proxy sends its requests to the broker's base URL in absolute form,
// to the proxy itself: they reach the broker, not the loopback check.
func TestBrokerThroughProxyVariables(t *testing.T) {
	up := newUpstream(t, nil)
	_, addr := startBroker(t, "anthropic", up, Allowlist, "")
	client := viaProxy(addr, nil)
	req, _ := http.NewRequest("POST", BaseURL(addr, "anthropic")+"/v1/messages", strings.NewReader(`{}`))
	req.Header.Set("x-api-key", placeholder)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the broker's base URL through the proxy got %d %q, want 200", resp.StatusCode, body)
	}
	if got := up.received(); len(got) != 1 || got[0].Header.Get("x-api-key") != realKey {
		t.Errorf("the provider got %d requests, want 1 with the real key", len(got))
	}
	// Another loopback port is no broker: refused as loopback.
	resp, body2 := send(t, "GET", "http://"+addr+"/", nil, "")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET / of the proxy itself got %d %q, want 400", resp.StatusCode, body2)
	}
}

// TestConnectToSelf: a CONNECT to the proxy itself (gemini's undici
// tunnels every request through its proxy, http:// ones too; codex its
// websocket) is a tunnel to the brokers: a broker's path inside reaches
// the provider with the real key, a websocket upgrade gets 403, any other
// path 400, and none of it is a denial; a CONNECT to another loopback
// port still is.
func TestConnectToSelf(t *testing.T) {
	up := newUpstream(t, nil)
	var mu sync.Mutex
	var denials []Denial
	px, addr := startProxy(t, Config{
		Policy:  mustPolicy(t, Sources{User: []Spec{{Origin: "--network", Mode: string(Allowlist)}}}),
		Brokers: []Broker{{Provider: "openai", Key: realKey, Placeholder: placeholder, Upstream: up.URL}},
		RootCAs: up.pool(),
		OnDeny: func(d Denial) {
			mu.Lock()
			denials = append(denials, d)
			mu.Unlock()
		},
	})
	_, port, _ := strings.Cut(addr, ":")
	inside := []struct{ req, status string }{
		{"POST " + BrokerPrefix + "openai/v1/responses HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + placeholder + "\r\nContent-Length: 2\r\n\r\n{}", "200"},
		{"GET " + BrokerPrefix + "openai/v1/responses HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + placeholder + "\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", "403"},
		{"GET /elsewhere HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", "400"},
	}
	for _, target := range []string{addr, "localhost:" + port} {
		for _, in := range inside {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("CONNECT %s: %v, %v; want 200", target, resp, err)
			}
			io.WriteString(c, in.req)
			resp, err = http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("inside the tunnel to %s: %v", target, err)
			}
			body, _ := io.ReadAll(resp.Body)
			c.Close()
			if fmt.Sprint(resp.StatusCode) != in.status {
				t.Errorf("inside the tunnel to %s, %q: %d %q, want %s", target, strings.SplitN(in.req, "\r", 2)[0], resp.StatusCode, body, in.status)
			}
		}
	}
	if got := up.received(); len(got) != 2 || got[0].Header.Get("Authorization") != "Bearer "+realKey {
		t.Errorf("the provider got %d requests, want 2 with the real key", len(got))
	}
	mu.Lock()
	if len(denials) != 0 || len(px.Summary().Denied) != 0 {
		t.Errorf("denials %+v, summary %+v: a tunnel to the proxy, a websocket to a broker, are no denial", denials, px.Summary().Denied)
	}
	mu.Unlock()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if resp.StatusCode != http.StatusForbidden || len(denials) != 1 {
		t.Errorf("CONNECT 127.0.0.1:1: %d, %d denials; want 403 and a denial", resp.StatusCode, len(denials))
	}
}
