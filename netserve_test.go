package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// netServe implements the script command
//
//	netserve http NAME | tls NAME HOST | tcp NAME | unix PATH | unix-tmp NAME
//
// which serves, from the test process and until the script ends, what a
// confined harness's network is checked against: an HTTP server
// answering "hello from NAME" to every request; a TLS server with a
// certificate for HOST (its CA in $WORK/NAME-ca.pem) that records each
// request's method, path and x-api-key header in $WORK/NAME.log and
// answers 200; a TCP listener that accepts and closes; a Unix socket
// that does the same, at PATH, or in a new directory of the real /tmp
// whose path unix-tmp sets $NAME_SOCK to. http, tls and tcp set
// $NAME_PORT to their port on 127.0.0.1.
func netServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: netserve http NAME | tls NAME HOST | tcp NAME | unix PATH | unix-tmp NAME")
	}
	kind, name := args[0], args[1]
	setPort := func(l net.Listener) {
		ts.Setenv(strings.ToUpper(name)+"_PORT", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	switch kind {
	case "http":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello from %s\n", name)
		})}
		go srv.Serve(l)
		ts.Defer(func() { srv.Close() })
		setPort(l)
	case "tls":
		if len(args) != 3 {
			ts.Fatalf("usage: netserve tls NAME HOST")
		}
		cert, caPEM := testCert(ts, args[2])
		ts.Check(os.WriteFile(ts.MkAbs(name+"-ca.pem"), caPEM, 0o644))
		l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
		ts.Check(err)
		var mu sync.Mutex
		logPath := ts.MkAbs(name + ".log")
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err == nil {
				fmt.Fprintf(f, "%s %s key=%s auth=%s\n", r.Method, r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("Authorization"))
				f.Close()
			}
			mu.Unlock()
			fmt.Fprintln(w, `{"ok": true}`)
		})}
		go srv.Serve(l)
		ts.Defer(func() { srv.Close() })
		setPort(l)
	case "tcp", "unix", "unix-tmp":
		network, addr := "tcp", "127.0.0.1:0"
		switch kind {
		case "unix":
			network, addr = "unix", ts.MkAbs(name)
		case "unix-tmp":
			// In the real /tmp, which the harness's namespaces hide.
			dir, err := os.MkdirTemp("/tmp", "workforce-sock-")
			ts.Check(err)
			ts.Defer(func() { os.RemoveAll(dir) })
			network, addr = "unix", dir+"/sock"
			ts.Setenv(strings.ToUpper(name)+"_SOCK", addr)
		}
		l, err := net.Listen(network, addr)
		ts.Check(err)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ts.Defer(func() { l.Close() })
		if kind == "tcp" {
			setPort(l)
		}
	default:
		ts.Fatalf("netserve: unknown kind %q", kind)
	}
}

// testCert returns a certificate for host signed by a new CA, and the
// CA's certificate in PEM.
func testCert(ts *testscript.TestScript, host string) (tls.Certificate, []byte) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "workforce test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	ts.Check(err)
	caCert, err := x509.ParseCertificate(caDER)
	ts.Check(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ts.Check(err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	ts.Check(err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}
