package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// transferSize is what BenchmarkTransfer moves per iteration: a large
// download.
const transferSize = 200 << 20

// bulkServer writes n bytes to every connection it accepts, then closes
// it; it returns its address.
func bulkServer(b *testing.B, n int) string { return pacedServer(b, n, 0) }

// pacedServer is bulkServer sending at most rate bytes a second (0: as
// fast as it can), as a download over a network link comes.
func pacedServer(b *testing.B, n int, rate float64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	chunk := make([]byte, 256<<10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				start := time.Now()
				for left := n; left > 0; {
					m := min(left, len(chunk))
					if _, err := c.Write(chunk[:m]); err != nil {
						return
					}
					left -= m
					if rate > 0 {
						due := start.Add(time.Duration(float64(n-left) / rate * float64(time.Second)))
						time.Sleep(time.Until(due))
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// connectVia opens a tunnel to host:port through the proxy at addr.
func connectVia(b *testing.B, addr, hostport string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	io.WriteString(c, "CONNECT "+hostport+" HTTP/1.1\r\nHost: "+hostport+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("CONNECT %s: %v %v", hostport, resp, err)
	}
	return c, br
}

// drain reads r to its end in reads of buf's size (io.Copy to io.Discard
// would read 8 KiB at a time, and measure that).
func drain(r io.Reader, buf []byte) int64 {
	n, _ := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, buf)
	return n
}

// BenchmarkTransfer: a 200 MB download from a loopback server, directly
// and through a CONNECT tunnel of the proxy.
func BenchmarkTransfer(b *testing.B) {
	srv := bulkServer(b, transferSize)
	buf := make([]byte, 256<<10)
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(transferSize)
		for b.Loop() {
			c, err := net.Dial("tcp", srv)
			if err != nil {
				b.Fatal(err)
			}
			if n := drain(c, buf); n != transferSize {
				b.Fatalf("read %d bytes", n)
			}
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		b.Setenv(TestHostsEnv, "bulk.test="+srv)
		_, addr := startProxy(b, Config{Policy: mustPolicy(b, Sources{User: []Spec{{Origin: "bench", Allow: []string{"bulk.test"}}}})})
		b.SetBytes(transferSize)
		for b.Loop() {
			c, br := connectVia(b, addr, "bulk.test:443")
			if n := drain(br, buf); n != transferSize {
				b.Fatalf("read %d bytes", n)
			}
			c.Close()
		}
	})
}

// BenchmarkTransferLink: a 100 MB download from a server sending at a
// link's rate (1 and 10 Gbit/s), directly and through the proxy: whether
// the proxy slows a download that comes over a network, as a real one
// does, rather than from the same machine.
func BenchmarkTransferLink(b *testing.B) {
	const size = 100 << 20
	for _, link := range []struct {
		name string
		rate float64
	}{{"1Gbit", 125e6}, {"10Gbit", 1250e6}} {
		srv := pacedServer(b, size, link.rate)
		buf := make([]byte, 256<<10)
		b.Run(link.name+"/direct", func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				c, err := net.Dial("tcp", srv)
				if err != nil {
					b.Fatal(err)
				}
				if n := drain(c, buf); n != size {
					b.Fatalf("read %d bytes", n)
				}
				c.Close()
			}
		})
		b.Run(link.name+"/proxy", func(b *testing.B) {
			b.Setenv(TestHostsEnv, "bulk.test="+srv)
			_, addr := startProxy(b, Config{Policy: mustPolicy(b, Sources{User: []Spec{{Origin: "bench", Allow: []string{"bulk.test"}}}})})
			b.SetBytes(size)
			for b.Loop() {
				c, br := connectVia(b, addr, "bulk.test:443")
				if n := drain(br, buf); n != size {
					b.Fatalf("read %d bytes", n)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkNewConnection: a connection and a one-byte answer, directly
// and through the proxy (CONNECT, the check, the dial).
func BenchmarkNewConnection(b *testing.B) {
	srv := bulkServer(b, 1)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", srv)
			if err != nil {
				b.Fatal(err)
			}
			if n, _ := io.Copy(io.Discard, c); n != 1 {
				b.Fatalf("read %d bytes", n)
			}
			c.Close()
		}
	})
	b.Run("proxy", func(b *testing.B) {
		b.Setenv(TestHostsEnv, "one.test="+srv)
		_, addr := startProxy(b, Config{Policy: mustPolicy(b, Sources{User: []Spec{{Origin: "bench", Allow: []string{"one.test:" + strconv.Itoa(443)}}}})})
		for b.Loop() {
			c, br := connectVia(b, addr, "one.test:443")
			if n, _ := io.Copy(io.Discard, br); n != 1 {
				b.Fatalf("read %d bytes", n)
			}
			c.Close()
		}
	})
}
