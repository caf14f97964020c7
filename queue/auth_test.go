package queue

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// serve starts an embedded server with opts (JetStream on, a free port of
// the loopback).
func serve(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", -1, true, t.TempDir(), true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the embedded nats-server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// TestConnectNKey: a server that knows users by their NKey takes the
// connection that signs with the seed (--queue-nkey), and refuses one
// without, saying why and where.
func TestConnectNKey(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	os.WriteFile(seedFile, seed, 0o600)
	ns := serve(t, &server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	ctx := context.Background()
	c, err := Connect(ctx, Options{URL: ns.ClientURL(), NKey: seedFile})
	if err != nil {
		t.Fatalf("with the seed: %v", err)
	}
	c.Close()
	_, err = Connect(ctx, Options{URL: ns.ClientURL()})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the queue at "+ns.ClientURL()) || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("without the seed: %v; want a refusal naming the server", err)
	}
	if _, err := Connect(ctx, Options{URL: ns.ClientURL(), NKey: filepath.Join(t.TempDir(), "none")}); err == nil || !strings.Contains(err.Error(), "NKey seed") {
		t.Errorf("a missing seed file: %v", err)
	}
}

// TestConnectTLS: a server that verifies its clients' certificates takes
// the connection with the CA and a client certificate (--queue-tls-ca,
// --queue-tls-cert, --queue-tls-key), and refuses one without the
// certificate.
func TestConnectTLS(t *testing.T) {
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	writePEM := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
		return path
	}
	caFile := writePEM("ca.pem", "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (cert, key string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return writePEM(name+".pem", "CERTIFICATE", der), writePEM(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	srvCert, srvKey := issue("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := issue("client", 3, x509.ExtKeyUsageClientAuth)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: srvCert, KeyFile: srvKey, CaFile: caFile, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	ns := serve(t, &server.Options{TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 5})
	url := fmt.Sprintf("tls://%s", ns.Addr().String())
	ctx := context.Background()
	c, err := Connect(ctx, Options{URL: url, TLSCA: caFile, TLSCert: cliCert, TLSKey: cliKey})
	if err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	c.Close()
	if _, err := Connect(ctx, Options{URL: url, TLSCA: caFile}); err == nil {
		t.Error("connected without a client certificate")
	}
	if _, err := Connect(ctx, Options{URL: url, TLSCA: caFile, TLSCert: cliCert}); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a certificate without its key: %v", err)
	}
}

// TestCheckFiles: the connection's files are read before any connection,
// and a file that is not what its flag wants is an error naming the flag
// and the file.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	file := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	seedFile := file("user.nk", string(seed))
	acc, _ := nkeys.CreateAccount()
	creds := credsFile(t, acc, dir, "user")
	garbage := file("garbage", "not a key\n")
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "c"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	kder, _ := x509.MarshalECPrivateKey(caKey)
	cert := file("cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	key := file("key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	good := Options{Creds: creds, NKey: seedFile, TLSCA: cert, TLSCert: cert, TLSKey: key}
	if err := good.CheckFiles(); err != nil {
		t.Fatalf("good files: %v", err)
	}
	for _, tt := range []struct {
		name string
		set  func(*Options)
		want string
	}{
		{"creds", func(o *Options) { o.Creds = garbage }, "--queue-creds " + garbage + ": "},
		{"creds without seed", func(o *Options) { o.Creds = cert }, "--queue-creds " + cert + ": "},
		{"nkey", func(o *Options) { o.NKey = garbage }, "--queue-nkey " + garbage + ": "},
		{"ca", func(o *Options) { o.TLSCA = garbage }, "--queue-tls-ca " + garbage + ": "},
		{"cert", func(o *Options) { o.TLSCert = garbage }, "--queue-tls-cert " + garbage + ", --queue-tls-key " + key + ": "},
		{"key", func(o *Options) { o.TLSKey = cert }, "--queue-tls-cert " + cert + ", --queue-tls-key " + cert + ": "},
	} {
		o := good
		tt.set(&o)
		if err := o.CheckFiles(); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error starting %q", tt.name, err, tt.want)
		}
	}
}
