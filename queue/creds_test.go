package queue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// account is an account of the test's operator.
type account struct {
	kp  nkeys.KeyPair // the account's key pair
	jwt string        // the account's JWT, signed by the operator
}

// newAccount makes an account signed by op, with JetStream (no limits) if
// js.
func newAccount(t *testing.T, op nkeys.KeyPair, name string, js bool) account {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	ac := jwt.NewAccountClaims(pub)
	ac.Name = name
	if js {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	}
	tok, err := ac.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	return account{kp: kp, jwt: tok}
}

// credsFile writes a credentials file (jwt.FormatUserConfig) of a new user
// of the account whose key pair is acc, into dir, and returns its path.
func credsFile(t *testing.T, acc nkeys.KeyPair, dir, name string) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	tok, err := uc.Encode(acc)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(tok, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveOperator starts an embedded server in operator (JWT) mode that
// trusts the operator op and knows the accounts accs, preloaded into its
// memory resolver, as an operator's configuration file would say. It has
// a system account of its own (JetStream in operator mode needs one).
func serveOperator(t *testing.T, op nkeys.KeyPair, accs ...account) *server.Server {
	t.Helper()
	sys := newAccount(t, op, "SYS", false)
	sysPub, _ := sys.kp.PublicKey()
	accs = append(accs, sys)
	opPub, _ := op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "test operator"
	opJWT, err := oc.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	var preload strings.Builder
	for _, a := range accs {
		pub, _ := a.kp.PublicKey()
		fmt.Fprintf(&preload, "  %s: %q\n", pub, a.jwt)
	}
	conf := filepath.Join(t.TempDir(), "server.conf")
	text := fmt.Sprintf("operator: %q\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: {\n%s}\n", opJWT, sysPub, preload.String())
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("server configuration: %v\n%s", err, text)
	}
	return serve(t, opts)
}

// TestConnectCreds: a server in operator mode takes the connection of a
// user whose credentials file (--queue-creds) its account signed; the
// queue works through it (the streams made, a task published and read
// back, a result kept). The user of an account the server does not know,
// and a connection without credentials, are refused, saying so.
func TestConnectCreds(t *testing.T) {
	op, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	acc := newAccount(t, op, "workforce", true)
	ns := serveOperator(t, op, acc)
	dir := t.TempDir()
	good := credsFile(t, acc.kp, dir, "worker")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c, err := Connect(ctx, Options{URL: ns.ClientURL(), Creds: good, Name: t.Name()})
	if err != nil {
		t.Fatalf("with the credentials file: %v", err)
	}
	defer c.Close()
	accPub, _ := acc.kp.PublicKey()
	// The streams are the account's: the server put them there by the
	// credentials' JWT.
	jsz, err := ns.Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		t.Fatal(err)
	}
	var streams []string
	for _, a := range jsz.AccountDetails {
		for _, s := range a.Streams {
			if a.Id == accPub {
				streams = append(streams, s.Name)
			}
		}
	}
	slices.Sort(streams)
	if want := []string{AdvisoryStream, ResultStream, TaskStream}; !slices.Equal(streams, want) {
		t.Errorf("the account of the credentials has the streams %q, want %q", streams, want)
	}
	k := Key{Batch: "b", Submission: "s", Task: "t1"}
	if err := c.Publish(ctx, NewTask(k, batch.Task{ID: "t1", Persona: "p", Task: "do it", Repo: "https://example.com/r.git"}, commit)); err != nil {
		t.Fatalf("publish: %v", err)
	}
	cons, err := c.SetupConsumer(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	batchMsgs, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range batchMsgs.Messages() {
		got++
		task, err := decode[Task](m.Data(), m.Subject())
		if err != nil || m.Subject() != k.TaskSubject() || task.Entry.Task != "do it" {
			t.Errorf("read back %s: %+v, %v; want the task published", m.Subject(), task, err)
		}
	}
	if got != 1 {
		t.Errorf("read back %d tasks, want 1", got)
	}
	if err := c.PublishResult(ctx, Result{Key: k, Status: report.StatusSucceeded}, ""); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := c.LookupResult(ctx, k, ""); err != nil || !ok || r.Key != k {
		t.Errorf("LookupResult = %+v, %v, %v; want the result published", r, ok, err)
	}

	// A user of another account, signed by the same operator but not
	// known to the server, and one without credentials: refused.
	other := credsFile(t, newAccount(t, op, "other", true).kp, dir, "stranger")
	_, err = Connect(ctx, Options{URL: ns.ClientURL(), Creds: other})
	if err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a user of an unknown account: %v; want a refusal naming %s and saying authorization failed", err, other)
	}
	_, err = Connect(ctx, Options{URL: ns.ClientURL()})
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("without credentials: %v; want an authorization refusal", err)
	}
}

// TestConnectBadCreds: a credentials file that cannot be read or does not
// hold a user JWT and that user's seed is refused before connecting, with
// an error naming the file and saying what is wrong; a good one goes on to
// the server (here none listens).
func TestConnectBadCreds(t *testing.T) {
	dir := t.TempDir()
	op, _ := nkeys.CreateOperator()
	acc := newAccount(t, op, "workforce", true)
	good := credsFile(t, acc.kp, dir, "good")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	userJWT, _ := nkeys.ParseDecoratedJWT(data)
	kp, _ := nkeys.ParseDecoratedUserNKey(data)
	seed, _ := kp.Seed()
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	accSeed, _ := acc.kp.Seed()
	// decorated is a credentials file as jwt.FormatUserConfig writes it,
	// which refuses a seed that is not the JWT's user's.
	decorated := func(tok string, seed []byte) string {
		return "-----BEGIN NATS USER JWT-----\n" + tok + "\n------END NATS USER JWT------\n\n" +
			"-----BEGIN USER NKEY SEED-----\n" + string(seed) + "\n------END USER NKEY SEED------\n"
	}
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "none.creds"), "no such file"},
		{"a directory", dir, "is a directory"},
		{"empty", write("empty.creds", ""), "no user JWT"},
		{"not credentials", write("junk.creds", "hello\n"), "no user JWT"},
		{"an account JWT", write("account.creds", acc.jwt), "no user JWT"},
		{"the JWT alone", write("jwt.creds", userJWT+"\n"), "no user NKey seed"},
		{"the seed alone", write("seed.creds", string(seed)+"\n"), "no user JWT"},
		{"an account seed", write("accseed.creds", decorated(userJWT, accSeed)), "no user NKey seed"},
		{"another user's seed", write("mismatched.creds", decorated(userJWT, otherSeed)), "the seed is not that of the JWT's user"},
		{"good", good, "cannot reach the queue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Connect(context.Background(), Options{URL: "nats://127.0.0.1:1", Creds: tt.path})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Connect with %s: %v; want an error saying %q", tt.path, err, tt.want)
			}
			if tt.name == "good" {
				return
			}
			if !strings.Contains(err.Error(), "credentials file "+tt.path+": ") {
				t.Errorf("Connect with %s: %v; want an error naming the file", tt.path, err)
			}
			if strings.Contains(err.Error(), "cannot reach") {
				t.Errorf("Connect with %s tried the server: %v", tt.path, err)
			}
		})
	}
}
