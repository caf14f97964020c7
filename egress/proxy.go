package egress

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// Config is what a Proxy serves.
type Config struct {
	// Policy decides which destinations pass (Resolve).
	Policy Policy
	// Record is the file each connection is appended to as a JSON line
	// (Record's type), created 0600 with its directory; "" records
	// nothing but the Summary. A line that cannot be written is counted
	// (RecordFailures), never stops the proxy.
	Record string
	// OnDeny, when set, is called once per denied request or connection,
	// on the goroutine that serves it: it must return quickly.
	OnDeny func(Denial)
	// Brokers are the API keys the proxy adds for the harness (Broker).
	Brokers []Broker
	// Resolver looks names up; nil is the system's (net.DefaultResolver).
	Resolver Resolver
	// RootCAs verify the brokers' upstream servers; nil is the system's.
	RootCAs *x509.CertPool
	// DialTimeout bounds a connection to a destination; 0 is 30 seconds.
	DialTimeout time.Duration
}

// Denial is a request or connection the proxy refused.
type Denial struct {
	Host   string
	Port   int
	Reason string
	// Via is how it came: "connect", "http", "broker <provider>".
	Via string
}

// Proxy is the run's way out: an HTTP proxy (CONNECT, and plain HTTP in
// absolute form, every request of a kept-alive connection checked), the
// brokers' origin-form paths, and forwarded loopback ports.
type Proxy struct {
	cfg     Config
	hosts   testHosts
	brokers map[string]*broker
	srv     *http.Server
	plain   *http.Transport
	rec     *recorder

	mu        sync.Mutex
	closed    bool
	conns     map[net.Conn]struct{} // tunnels and forwarded connections
	listeners map[net.Listener]struct{}
	wg        sync.WaitGroup
}

// New returns a proxy serving cfg; it serves nothing until Serve or
// Forward is called. It fails on a broker it cannot use and on a
// malformed TestHostsEnv.
func New(cfg Config) (*Proxy, error) {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 30 * time.Second
	}
	hosts, err := testHostsFromEnv()
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		cfg:       cfg,
		hosts:     hosts,
		brokers:   map[string]*broker{},
		conns:     map[net.Conn]struct{}{},
		listeners: map[net.Listener]struct{}{},
		rec:       newRecorder(cfg.Record, cfg.Policy.Mode),
	}
	for _, b := range cfg.Brokers {
		br, err := newBroker(p, b)
		if err != nil {
			return nil, err
		}
		if have, dup := p.brokers[br.prov.Name]; dup {
			if err := have.add(br); err != nil {
				return nil, err
			}
			continue
		}
		p.brokers[br.prov.Name] = br
	}
	p.plain = &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialChecked,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	return p, nil
}

// Serve serves l as the HTTP proxy until Close; it returns nil then.
func (p *Proxy) Serve(l net.Listener) error {
	err := p.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops every listener and ends every connection, waits for them to
// be recorded and closes the record file.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.listeners {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.plain.CloseIdleConnections()
	for _, b := range p.brokers {
		b.transport.CloseIdleConnections()
	}
	p.wg.Wait()
	if cerr := p.rec.close(); err == nil {
		err = cerr
	}
	return err
}

// Summary aggregates what was recorded so far per host and port: the
// one-shot result's "network".
func (p *Proxy) Summary() Summary { return p.rec.summary() }

// RecordFailures returns how many record lines could not be written and
// the first error.
func (p *Proxy) RecordFailures() (int, error) { return p.rec.failures() }

// enter counts a request or connection in, unless the proxy is closed:
// Close waits for those counted.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

// track registers c to be closed by Close; it returns false (and closes
// c) when the proxy is closed already.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// ServeHTTP serves one request: CONNECT, a plain HTTP request in absolute
// form, or a broker's origin-form path.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		http.Error(w, "workforce proxy: closed", http.StatusServiceUnavailable)
		return
	}
	defer p.wg.Done()
	self := isSelf(r)
	switch {
	case r.Method == http.MethodConnect:
		p.serveConnect(w, r)
	case (r.URL.Scheme != "" || r.URL.Host != "") && !self:
		p.servePlain(w, r)
	case strings.HasPrefix(r.URL.Path, BrokerPrefix):
		p.serveBroker(w, r)
	default:
		http.Error(w, "workforce proxy: this is the run's HTTP proxy; ask for a URL in absolute form (http://host/...), CONNECT host:port, or a provider's path under "+BrokerPrefix, http.StatusBadRequest)
	}
}

// isSelf reports whether a request in absolute form names the proxy
// itself: a loopback address (or localhost) on the port the request came
// in on. A harness whose HTTP_PROXY names the proxy sends its requests to
// a broker's base URL that way, since NO_PROXY leaves loopback out.
func isSelf(r *http.Request) bool {
	if r.URL.Host == "" || r.URL.Scheme != "http" {
		return false
	}
	host, port, err := splitHostPort(r.URL.Host, 80)
	return err == nil && targetsSelf(r, host, port)
}

// targetsSelf reports whether host:port names the proxy itself: a
// loopback address (or localhost) on the port r came in on.
func targetsSelf(r *http.Request, host string, port int) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lap, err := netip.ParseAddrPort(local.String())
	if err != nil || port != int(lap.Port()) {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netspec.ParseIP(host)
	return err == nil && ip.IsLoopback() && lap.Addr().Unmap().IsLoopback()
}

// decision is a checked destination: the addresses to dial (checked, so
// that nothing is resolved twice), or why it is refused.
type decision struct {
	host   string
	port   int
	addrs  []netip.AddrPort
	denied string // the reason of a policy denial
	err    error  // a failure that is no denial (the name does not resolve)
}

// check decides host:port: the policy by name, then every address the
// name resolves to (a private one only when the host is listed
// explicitly).
func (p *Proxy) check(ctx context.Context, rawHost string, port int) decision {
	host, err := NormalizeHost(rawHost)
	if err != nil {
		return decision{host: rawHost, port: port, denied: err.Error()}
	}
	d := decision{host: host, port: port}
	if port < 1 || port > 65535 {
		d.denied = "port " + strconv.Itoa(port) + " is out of range"
		return d
	}
	if ok, why := p.cfg.Policy.Allows(host, port); !ok {
		d.denied = why
		return d
	}
	if ap, ok := p.hosts[host]; ok {
		dport := port
		if ap.Port() != 0 {
			dport = int(ap.Port())
		}
		d.addrs = []netip.AddrPort{netip.AddrPortFrom(ap.Addr(), uint16(dport))}
		return d
	}
	var ips []netip.Addr
	if ip, err := netspec.ParseIP(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		lctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
		ips, err = p.cfg.Resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil {
			d.err = fmt.Errorf("cannot resolve %s: %w", host, err)
			return d
		}
		if len(ips) == 0 {
			d.err = fmt.Errorf("cannot resolve %s: no address", host)
			return d
		}
	}
	explicit := p.cfg.Policy.Explicit(host, port)
	for _, ip := range ips {
		ip = ip.Unmap()
		if kind := Special(ip); kind != "" && !explicit {
			if ip.String() == host {
				d.denied = fmt.Sprintf("%s is a %s address, refused unless listed explicitly", host, kind)
			} else {
				d.denied = fmt.Sprintf("%s resolves to %s, a %s address, refused unless listed explicitly", host, ip, kind)
			}
			d.addrs = nil
			return d
		}
		d.addrs = append(d.addrs, netip.AddrPortFrom(ip, uint16(port)))
	}
	return d
}

// dial connects to the first of d's checked addresses that answers.
func (p *Proxy) dial(ctx context.Context, d decision) (net.Conn, error) {
	dialer := net.Dialer{Timeout: p.cfg.DialTimeout}
	var firstErr error
	for _, a := range d.addrs {
		c, err := dialer.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("no address to dial")
	}
	return nil, fmt.Errorf("cannot connect to %s:%d: %w", d.host, d.port, firstErr)
}

// deny answers a refused request with 403 and a body naming the host
// and how to allow it, records it and tells OnDeny.
func (p *Proxy) deny(w http.ResponseWriter, start time.Time, host string, port int, reason, via string) {
	p.denied(start, host, port, reason, via)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Workforce-Denied", "network")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, DenialMessage(host, port, reason))
}

// denied records a refusal and tells OnDeny.
func (p *Proxy) denied(start time.Time, host string, port int, reason, via string) {
	p.rec.add(Record{Time: start, Host: host, Port: port, Via: via, Allowed: false, Reason: reason})
	if p.cfg.OnDeny != nil {
		p.cfg.OnDeny(Denial{Host: host, Port: port, Reason: reason, Via: via})
	}
}

// DenialMessage is the body of a denied request's 403: the host, why,
// and how to allow it.
func DenialMessage(host string, port int, reason string) string {
	hp := net.JoinHostPort(host, strconv.Itoa(port))
	rule := host
	if strings.Contains(host, ":") {
		rule = "[" + host + "]"
	}
	return fmt.Sprintf("workforce: the run's network policy denies %s: %s.\n"+
		"To allow it, run with --network-allow %s (or --network-allow %s:%d for that port alone),\n"+
		"or add it to <home>/config.json: \"network\": {\"allow\": [%q]}.\n", hp, reason, rule, rule, port, rule)
}

func splitHostPort(hostport string, defPort int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if strings.Contains(err.Error(), "missing port") && defPort != 0 {
			return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), defPort, nil
		}
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not between 1 and 65535", ps)
	}
	return host, port, nil
}

func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	host, port, err := splitHostPort(r.Host, 0)
	if err != nil {
		http.Error(w, "workforce proxy: CONNECT wants host:port: "+err.Error(), http.StatusBadRequest)
		return
	}
	if targetsSelf(r, host, port) {
		p.serveSelfTunnel(w)
		return
	}
	d := p.check(r.Context(), host, port)
	if d.denied != "" {
		p.deny(w, start, d.host, d.port, d.denied, "connect")
		return
	}
	var up net.Conn
	if d.err == nil {
		up, err = p.dial(r.Context(), d)
		d.err = err
	}
	if d.err != nil {
		p.rec.add(Record{Time: start, Host: d.host, Port: d.port, Via: "connect", Allowed: true, Error: d.err.Error()})
		http.Error(w, "workforce proxy: "+d.err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "workforce proxy: cannot take the connection over", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	client.SetDeadline(time.Time{})
	if !p.track(client) {
		up.Close()
		return
	}
	defer p.untrack(client)
	if !p.track(up) {
		client.Close()
		return
	}
	defer p.untrack(up)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		up.Close()
		return
	}
	// What the client sent after CONNECT's header, read into the server's
	// buffer already, goes first.
	var early int64
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		m, _ := up.Write(b)
		early = int64(m)
	}
	upBytes, down := pipe(client, up)
	p.rec.add(Record{Time: start, Host: d.host, Port: d.port, Via: "connect", Allowed: true, Up: upBytes + early, Down: down})
}

// serveSelfTunnel serves a CONNECT to the proxy itself: what a client
// whose proxy variables name the proxy opens to reach a broker's base URL
// (gemini's undici tunnels every request, http:// ones too; codex its
// Responses websocket). Inside, the brokers' paths are served as they
// are outside, and nothing else: the tunnel itself leaves nowhere, and is
// neither recorded nor a denial.
func (p *Proxy) serveSelfTunnel(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "workforce proxy: cannot take the connection over", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	client.SetDeadline(time.Time{})
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		return
	}
	done := make(chan struct{})
	var once sync.Once
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodConnect && strings.HasPrefix(r.URL.Path, BrokerPrefix) && (r.URL.Host == "" || isSelf(r)) {
				p.serveBroker(w, r)
				return
			}
			http.Error(w, "workforce proxy: a tunnel to the proxy itself serves the brokers' paths ("+BrokerPrefix+"...) only", http.StatusBadRequest)
		}),
		ReadHeaderTimeout: time.Minute,
		ErrorLog:          p.srv.ErrorLog,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				once.Do(func() { close(done) })
			}
		},
	}
	// What the client sent after CONNECT's header, read into the server's
	// buffer already, comes first.
	_ = srv.Serve(&oneConn{c: &bufferedConn{Conn: client, r: buf.Reader}})
	<-done
}

// oneConn is a listener that accepts c once.
type oneConn struct {
	c    net.Conn
	done bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if l.done {
		return nil, net.ErrClosed
	}
	l.done = true
	return l.c, nil
}
func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.c.LocalAddr() }

// bufferedConn reads what r holds before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// pipe copies both ways between client and up until both directions
// end, half-closing each side when its source ends; it returns the
// bytes sent up and down and closes both. Between two TCP connections
// io.Copy splices (splice(2) through a 1 MiB pipe): no copy in user
// space, which measured faster than a 256 KiB buffer (BENCHMARKS.md).
func pipe(client, up net.Conn) (upBytes, down int64) {
	done := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(up, client)
		closeWrite(up)
		done <- n
	}()
	down, _ = io.Copy(client, up)
	closeWrite(client)
	upBytes = <-done
	client.Close()
	up.Close()
	return upBytes, down
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// checkedKey carries a plain request's checked decision to dialChecked.
type checkedKey struct{}

// dialChecked dials the addresses checked for the request being sent,
// never a name: what the policy saw is what is reached.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	d, ok := ctx.Value(checkedKey{}).(decision)
	if !ok || len(d.addrs) == 0 {
		return nil, fmt.Errorf("workforce proxy: %s was not checked", addr)
	}
	return p.dial(ctx, d)
}

// countingBody counts what is read through it.
type countingBody struct {
	io.ReadCloser
	mu sync.Mutex
	n  int64
}

func (c *countingBody) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

func (c *countingBody) count() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// servePlain forwards one plain HTTP request in absolute form, after
// checking its host: each request of a kept-alive connection comes here.
func (p *Proxy) servePlain(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.URL.Scheme != "http" {
		http.Error(w, "workforce proxy: only http:// is forwarded in absolute form; https goes through CONNECT", http.StatusBadRequest)
		return
	}
	host, port, err := splitHostPort(r.URL.Host, 80)
	if err != nil || host == "" {
		http.Error(w, "workforce proxy: no host in "+r.URL.Redacted(), http.StatusBadRequest)
		return
	}
	d := p.check(r.Context(), host, port)
	if d.denied != "" {
		p.deny(w, start, d.host, d.port, d.denied, "http")
		return
	}
	if d.err != nil {
		p.rec.add(Record{Time: start, Host: d.host, Port: d.port, Via: "http", Allowed: true, Error: d.err.Error()})
		http.Error(w, "workforce proxy: "+d.err.Error(), http.StatusBadGateway)
		return
	}
	var upBody *countingBody
	if r.Body != nil && r.Body != http.NoBody {
		upBody = &countingBody{ReadCloser: r.Body}
		r.Body = upBody
	}
	r = r.WithContext(context.WithValue(r.Context(), checkedKey{}, d))
	var downBody *countingBody
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: "http", Host: r.URL.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
			pr.Out.Host = r.URL.Host
		},
		Transport: p.plain,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusSwitchingProtocols {
				return nil // the upgraded connection needs its body writable; its bytes go uncounted
			}
			downBody = &countingBody{ReadCloser: resp.Body}
			resp.Body = downBody
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			failed = err
			http.Error(w, "workforce proxy: "+err.Error(), http.StatusBadGateway)
		},
		ErrorLog: p.srv.ErrorLog,
	}
	rp.ServeHTTP(w, r)
	rec := Record{Time: start, Host: d.host, Port: d.port, Via: "http", Allowed: true, Up: upBody.count(), Down: downBody.count()}
	if failed != nil {
		rec.Error = failed.Error()
	}
	p.rec.add(rec)
}

// Forward serves l by joining each connection it accepts to the host's
// 127.0.0.1:port (a local model server), recorded as host "localhost" on
// that port. It returns nil once Close is called.
func (p *Proxy) Forward(l net.Listener, port int) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return nil
	}
	p.listeners[l] = struct{}{}
	p.mu.Unlock()
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			delete(p.listeners, l)
			p.mu.Unlock()
			if closed {
				return nil
			}
			return err
		}
		if !p.enter() {
			c.Close()
			continue
		}
		go func() {
			defer p.wg.Done()
			start := time.Now()
			if !p.track(c) {
				return
			}
			defer p.untrack(c)
			up, err := net.DialTimeout("tcp", target, p.cfg.DialTimeout)
			if err != nil {
				c.Close()
				p.rec.add(Record{Time: start, Host: "localhost", Port: port, Via: "forward", Allowed: true, Error: err.Error()})
				return
			}
			if !p.track(up) {
				c.Close()
				return
			}
			defer p.untrack(up)
			upBytes, down := pipe(c, up)
			p.rec.add(Record{Time: start, Host: "localhost", Port: port, Via: "forward", Allowed: true, Up: upBytes, Down: down})
		}()
	}
}
