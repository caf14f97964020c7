package queue

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startServer starts an embedded nats-server with JetStream, its store in
// a temporary directory, on a free port, and returns its URL.
func startServer(t testing.TB) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the embedded nats-server did not start")
	}
	t.Cleanup(ns.Shutdown)
	return ns.ClientURL()
}

// connect connects to url and sets the streams up.
func connect(t testing.TB, url string) *Conn {
	t.Helper()
	ctx := context.Background()
	c, err := Connect(ctx, Options{URL: url, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
