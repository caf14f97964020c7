package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from a table and counts the lookups.
type fakeResolver struct {
	addrs map[string][]netip.Addr
	calls atomic.Int32
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.calls.Add(1)
	if a, ok := f.addrs[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// startProxy serves a proxy of cfg on a loopback port and returns it with
// its address; the test's end closes it.
func startProxy(t testing.TB, cfg Config) (*Proxy, string) {
	t.Helper()
	px, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- px.Serve(l) }()
	t.Cleanup(func() {
		px.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve returned %v after Close, want nil", err)
		}
	})
	return px, l.Addr().String()
}

func mustPolicy(t testing.TB, src Sources) Policy {
	t.Helper()
	pol, err := Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// port returns the port of a test server's URL.
func port(t testing.TB, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// viaProxy returns a client that goes through the proxy at addr.
func viaProxy(addr string, tlsConfig *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: addr}),
		TLSClientConfig: tlsConfig,
	}, Timeout: 10 * time.Second}
}

// rawRequest sends one request on conn and reads its response whole.
func rawRequest(t *testing.T, conn net.Conn, br *bufio.Reader, req string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response to %q: %v", req, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// TestProxyAllowsAndDenies: an allowed host is reached by CONNECT (TLS
// verified end to end) and by plain HTTP; a denied one gets 403 whose
// body names it and how to allow it, OnDeny hears of it, and the record
// and the summary say both.
func TestProxyAllowsAndDenies(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure hello")
	}))
	defer tlsSrv.Close()
	plainSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "plain hello %s %s %s", r.Host, r.URL.Path, body)
	}))
	defer plainSrv.Close()
	t.Setenv(TestHostsEnv, "example.com=127.0.0.1:"+port(t, tlsSrv.URL)+",plain.test=127.0.0.1:"+port(t, plainSrv.URL)+",denied.test=127.0.0.1:"+port(t, plainSrv.URL))

	record := filepath.Join(t.TempDir(), "results", "s1", "network.jsonl")
	var mu sync.Mutex
	var denials []Denial
	px, addr := startProxy(t, Config{
		Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "config.json", Allow: []string{"example.com:443", "plain.test"}}}}),
		Record: record,
		OnDeny: func(d Denial) { mu.Lock(); denials = append(denials, d); mu.Unlock() },
	})
	client := viaProxy(addr, tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig)

	resp, err := client.Get("https://example.com/")
	if err != nil {
		t.Fatalf("CONNECT to an allowed host: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "secure hello" {
		t.Errorf("through CONNECT got %q, want %q", body, "secure hello")
	}

	resp, err = client.Post("http://plain.test/path", "text/plain", strings.NewReader("up"))
	if err != nil {
		t.Fatalf("plain HTTP to an allowed host: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "plain hello plain.test /path up"; string(body) != want {
		t.Errorf("plain HTTP got %q, want %q", body, want)
	}

	resp, err = client.Get("http://denied.test/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a denied host got %d, want 403", resp.StatusCode)
	}
	for _, want := range []string{"denied.test:80", "not in the run's allow list", "--network-allow denied.test", `"network": {"allow": ["denied.test"]}`, "config.json"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the 403 body %q lacks %q", body, want)
		}
	}

	if _, err := client.Get("https://denied.test/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT to a denied host: %v, want a Forbidden error", err)
	}

	px.Close()
	mu.Lock()
	if len(denials) != 2 || denials[0].Host != "denied.test" || denials[0].Via != "http" || denials[1].Port != 443 || denials[1].Via != "connect" {
		t.Errorf("OnDeny heard %+v, want denied.test:80 by http then denied.test:443 by connect", denials)
	}
	mu.Unlock()

	sum, _ := json.Marshal(px.Summary())
	wantPrefix := `{"mode":"allowlist","allowed":[{"host":"example.com","port":443,"count":1,"bytes":`
	if !strings.HasPrefix(string(sum), wantPrefix) || !strings.Contains(string(sum), `{"host":"plain.test","port":80,"count":1,"bytes":`) ||
		!strings.HasSuffix(string(sum), `"denied":[{"host":"denied.test","port":80,"count":1},{"host":"denied.test","port":443,"count":1}]}`) {
		t.Errorf("Summary = %s", sum)
	}
	for _, a := range px.Summary().Allowed {
		if a.Bytes == 0 {
			t.Errorf("Summary counts no bytes for %s:%d", a.Host, a.Port)
		}
	}

	fi, err := os.Stat(record)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the record file has mode %v, want 0600", fi.Mode().Perm())
	}
	recs := readRecords(t, record)
	if len(recs) != 4 {
		t.Fatalf("the record holds %d lines, want 4: %+v", len(recs), recs)
	}
	byKey := map[string]Record{}
	for _, r := range recs {
		byKey[fmt.Sprintf("%s:%d", r.Host, r.Port)] = r
		if r.Time.IsZero() {
			t.Errorf("record %+v has no time", r)
		}
	}
	if r := byKey["example.com:443"]; !r.Allowed || r.Via != "connect" || r.Up == 0 || r.Down == 0 {
		t.Errorf("the CONNECT record is %+v, want allowed with bytes both ways", r)
	}
	if r := byKey["plain.test:80"]; !r.Allowed || r.Up != 2 || r.Down == 0 {
		t.Errorf("the plain record is %+v, want allowed, 2 bytes up, some down", r)
	}
	if r := byKey["denied.test:80"]; r.Allowed || r.Reason != "not in the run's allow list" {
		t.Errorf("the denial's record is %+v", r)
	}
	if n, err := px.RecordFailures(); n != 0 {
		t.Errorf("RecordFailures = %d, %v", n, err)
	}
}

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestProxyKeepAliveChecksEveryRequest: the second request of a kept-alive
// connection, to a denied host, is denied although the first was allowed.
func TestProxyKeepAliveChecksEveryRequest(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "reached "+r.Host)
	}))
	defer srv.Close()
	p := port(t, srv.URL)
	t.Setenv(TestHostsEnv, "allowed.test=127.0.0.1:"+p+",denied.test=127.0.0.1:"+p)
	_, addr := startProxy(t, Config{Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "config.json", Allow: []string{"allowed.test"}}}})})

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	resp, body := rawRequest(t, conn, br, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp.StatusCode != 200 || body != "reached allowed.test" {
		t.Fatalf("the first request got %d %q", resp.StatusCode, body)
	}
	// The same connection, a Host header naming the allowed host: the
	// request's URL decides.
	resp, body = rawRequest(t, conn, br, "GET http://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "denied.test") {
		t.Errorf("the second request on the connection got %d %q, want 403 naming denied.test", resp.StatusCode, body)
	}
	resp, _ = rawRequest(t, conn, br, "GET http://allowed.test/again HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Errorf("a third request, allowed again, got %d", resp.StatusCode)
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the server was reached %d times, want 2", n)
	}
}

// TestProxyRefusesPrivateAddresses: under open, the metadata address,
// loopback and a name resolving to a private address are refused, unless
// the user lists that host or address; the address checked is the one
// dialled (one lookup per request).
func TestProxyRefusesPrivateAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inside") }))
	defer srv.Close()
	p := port(t, srv.URL)
	res := &fakeResolver{addrs: map[string][]netip.Addr{
		"intranet.test": {netip.MustParseAddr("10.0.0.7")},
		"sneaky.test":   {netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("127.0.0.1")},
		"mapped.test":   {netip.MustParseAddr("::ffff:169.254.169.254")},
		"listed.test":   {netip.MustParseAddr("127.0.0.1")},
		"wild.listed":   {netip.MustParseAddr("127.0.0.1")},
	}}
	t.Setenv(TestHostsEnv, "")
	_, addr := startProxy(t, Config{
		Policy: mustPolicy(t, Sources{User: []Spec{
			{Origin: "--network", Mode: "open"},
			{Origin: "--network-allow", Allow: []string{"listed.test:" + p, "*.listed"}},
		}}),
		Resolver: res,
	})
	client := viaProxy(addr, nil)
	tests := []struct {
		url, want string
	}{
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"},
		{"http://127.0.0.1:" + p + "/", "127.0.0.1 is a loopback address"},
		{"http://[::1]:" + p + "/", "::1 is a loopback address"},
		{"http://intranet.test/", "intranet.test resolves to 10.0.0.7, a private address"},
		{"http://sneaky.test:" + p + "/", "resolves to 127.0.0.1, a loopback address"},
		{"http://mapped.test/", "resolves to 169.254.169.254, a link-local address"},
		{"http://wild.listed:" + p + "/", "loopback address"},
		{"http://listed.test:1/", "loopback address"}, // listed for another port
	}
	for _, tt := range tests {
		resp, err := client.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s got %d %q, want 403 with %q", tt.url, resp.StatusCode, body, tt.want)
		}
	}
	// CONNECT to the metadata address too.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := rawRequest(t, conn, bufio.NewReader(conn), "CONNECT 169.254.169.254:443 HTTP/1.1\r\nHost: 169.254.169.254:443\r\n\r\n")
	conn.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "link-local") {
		t.Errorf("CONNECT 169.254.169.254:443 got %d %q", resp.StatusCode, body)
	}

	before := res.calls.Load()
	resp2, err := client.Get("http://listed.test:" + p + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != 200 || string(b) != "inside" {
		t.Errorf("a loopback host listed explicitly got %d %q, want 200 inside", resp2.StatusCode, b)
	}
	if n := res.calls.Load() - before; n != 1 {
		t.Errorf("the proxy looked listed.test up %d times for one request, want 1", n)
	}
}

// TestProxyModeNone: everything but the always-allowed entries is denied,
// with the reason naming the mode and where it was set.
func TestProxyModeNone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api") }))
	defer srv.Close()
	p := port(t, srv.URL)
	t.Setenv(TestHostsEnv, "api.harness.test=127.0.0.1:"+p+",pypi.org=127.0.0.1:"+p)
	always, _ := NewEntry("api.harness.test", "harness standin (api key)")
	px, addr := startProxy(t, Config{Policy: mustPolicy(t, Sources{
		Narrow: []Spec{{Origin: "persona quiet", Mode: "none"}},
		Always: []Entry{always},
	})})
	client := viaProxy(addr, nil)
	resp, err := client.Get("http://pypi.org/simple/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "network mode is none (persona quiet)") {
		t.Errorf("mode none: GET pypi.org got %d %q", resp.StatusCode, body)
	}
	resp, err = client.Get("http://api.harness.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("mode none: the always-allowed host got %d, want 200", resp.StatusCode)
	}
	if s := px.Summary(); s.Mode != None || len(s.Denied) != 1 || len(s.Allowed) != 1 {
		t.Errorf("Summary = %+v", s)
	}
}

// TestProxyRecordUnwritable: a record file that cannot be made stops
// nothing; the failures are counted.
func TestProxyRecordUnwritable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	t.Setenv(TestHostsEnv, "ok.test=127.0.0.1:"+port(t, srv.URL))
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	px, addr := startProxy(t, Config{
		Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "config.json", Allow: []string{"ok.test"}}}}),
		Record: filepath.Join(file, "network.jsonl"), // under a file: cannot be made
	})
	client := viaProxy(addr, nil)
	for range 2 {
		resp, err := client.Get("http://ok.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("with an unwritable record, got %d", resp.StatusCode)
		}
	}
	px.Close()
	if n, err := px.RecordFailures(); n != 2 || err == nil {
		t.Errorf("RecordFailures = %d, %v; want 2 and the error", n, err)
	}
	if s := px.Summary(); len(s.Allowed) != 1 || s.Allowed[0].Count != 2 {
		t.Errorf("Summary = %+v, want ok.test counted twice", s)
	}
}

// TestForward: a connection accepted on the forwarded listener reaches
// the host's 127.0.0.1:port, both ways, and is recorded as localhost.
func TestForward(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, "model says: "+line)
			}()
		}
	}()
	tport := target.Addr().(*net.TCPAddr).Port
	px, err := New(Config{Policy: mustPolicy(t, Sources{})})
	if err != nil {
		t.Fatal(err)
	}
	inside, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- px.Forward(inside, tport) }()

	c, err := net.Dial("tcp", inside.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "hello\n")
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || string(got) != "model says: hello\n" {
		t.Errorf("through Forward got %q, %v", got, err)
	}
	px.Close()
	if err := <-done; err != nil {
		t.Errorf("Forward returned %v after Close, want nil", err)
	}
	s := px.Summary()
	if len(s.Allowed) != 1 || s.Allowed[0].Host != "localhost" || s.Allowed[0].Port != tport || s.Allowed[0].Bytes != int64(len("hello\n")+len("model says: hello\n")) {
		t.Errorf("Summary = %+v, want localhost:%d with the bytes both ways", s, tport)
	}
}

// TestCloseEndsTunnels: Close ends an open tunnel and records it.
func TestCloseEndsTunnels(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			io.Copy(io.Discard, c) // never answers, never closes
		}
	}()
	t.Setenv(TestHostsEnv, "slow.test="+l.Addr().String())
	px, addr := startProxy(t, Config{Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "x", Allow: []string{"slow.test"}}}})})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	io.WriteString(conn, "CONNECT slow.test:443 HTTP/1.1\r\nHost: slow.test:443\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	io.WriteString(conn, "data")
	closed := make(chan struct{})
	go func() { px.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end an open tunnel")
	}
	if s := px.Summary(); len(s.Allowed) != 1 || s.Allowed[0].Host != "slow.test" {
		t.Errorf("Summary = %+v, want the tunnel recorded", s)
	}
}

func TestParseTestHosts(t *testing.T) {
	h, err := parseTestHosts("API.example.test=127.0.0.1:4321, b.test=::1,c.test=[::1]:80")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"api.example.test": "127.0.0.1:4321", "b.test": "[::1]:0", "c.test": "[::1]:80"}
	for k, v := range want {
		if h[k].String() != v {
			t.Errorf("%s maps to %s, want %s", k, h[k], v)
		}
	}
	for _, bad := range []string{"noequals", "a.test=notanip", "bad host=1.2.3.4"} {
		if _, err := parseTestHosts(bad); err == nil || !strings.Contains(err.Error(), TestHostsEnv) {
			t.Errorf("parseTestHosts(%q) = %v, want an error naming %s", bad, err, TestHostsEnv)
		}
	}
}

// TestProxyPlainUpgrade: a plain HTTP request that upgrades the
// connection (a websocket over ws://) to an allowed host works both ways.
func TestProxyPlainUpgrade(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "want an upgrade", http.StatusBadRequest)
			return
		}
		c, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		line, _ := brw.ReadString('\n')
		io.WriteString(c, "echo: "+line)
	}))
	defer srv.Close()
	t.Setenv(TestHostsEnv, "ws.test=127.0.0.1:"+port(t, srv.URL))
	_, addr := startProxy(t, Config{Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "x", Allow: []string{"ws.test"}}}})})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	io.WriteString(conn, "GET http://ws.test/ HTTP/1.1\r\nHost: ws.test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("the upgrade got %v, %v; want 101", resp, err)
	}
	io.WriteString(conn, "hi\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if line != "echo: hi\n" {
		t.Errorf("after the upgrade read %q, %v", line, err)
	}
}

// TestConnectEarlyData: bytes the client sends right behind CONNECT's
// header, in the same packet, reach the destination first.
func TestConnectEarlyData(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "echo: "+line)
	}()
	t.Setenv(TestHostsEnv, "echo.test="+l.Addr().String())
	px, addr := startProxy(t, Config{Policy: mustPolicy(t, Sources{User: []Spec{{Origin: "x", Allow: []string{"echo.test"}}}})})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "CONNECT echo.test:443 HTTP/1.1\r\nHost: echo.test:443\r\n\r\nearly\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v, %v", resp, err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadString('\n')
	if line != "echo: early\n" {
		t.Errorf("through the tunnel read %q, %v; want the early bytes echoed", line, err)
	}
	conn.Close()
	px.Close()
	if s := px.Summary(); len(s.Allowed) != 1 || s.Allowed[0].Bytes != int64(len("early\n")+len("echo: early\n")) {
		t.Errorf("Summary = %+v, want the early bytes counted", s)
	}
}
