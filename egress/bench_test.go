package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
)

// transferSize is what BenchmarkTransfer moves per iteration: a large
// download.
const transferSize = 200 << 20

// bulkServer writes n bytes to every connection it accepts, then closes
// it; it returns its address.
func bulkServer(b *testing.B, n int) string {
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
				for left := n; left > 0; {
					m := min(left, len(chunk))
					if _, err := c.Write(chunk[:m]); err != nil {
						return
					}
					left -= m
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
