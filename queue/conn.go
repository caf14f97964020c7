package queue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// The names of the streams, subjects and consumers (docs/queue.md).
const (
	// TaskStream holds the tasks waiting for a worker: work-queue
	// retention (a task leaves the stream when a worker acks it), one
	// message a subject.
	TaskStream = "WORKFORCE_TASKS"
	// TaskSubjects are the subjects of TaskStream:
	// workforce.tasks.<batch>.<submission>.<task>.
	TaskSubjects = "workforce.tasks.>"
	// ResultStream holds the results: limits retention for ResultMaxAge,
	// at most one message a subject, a second one refused (DiscardNew
	// per subject): a task is reported once.
	ResultStream = "WORKFORCE_RESULTS"
	// ResultSubjects are the subjects of ResultStream:
	// workforce.results.<batch>.<submission>.<task>.
	ResultSubjects = "workforce.results.>"
	// AdvisoryStream keeps the server's advisories about tasks delivered
	// MaxDeliver times without an ack, so that a task that every worker
	// failed on (or died on) is reported as failed, by whoever sweeps
	// next (Sweep), even when nobody was listening as it happened.
	AdvisoryStream = "WORKFORCE_ADVISORIES"
	// Consumer is the durable pull consumer of TaskStream the workers
	// share.
	Consumer = "workers"
	// sweeper is the durable consumer of AdvisoryStream.
	sweeper = "sweepers"
)

// advisorySubject is the subject of the server's advisory that a message
// of TaskStream reached MaxDeliver deliveries on Consumer.
const advisorySubject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + TaskStream + "." + Consumer

const (
	// DefaultAckWait is how long a worker may hold a task without a sign
	// of life before the server delivers it to another worker. A worker
	// sends one every third of it while the task runs.
	DefaultAckWait = 2 * time.Minute
	// MaxDeliver is how many times a task is delivered at most: a task
	// whose worker died (or failed before reporting) runs again, up to
	// this many times, then is reported as failed.
	MaxDeliver = 5
	// ResultMaxAge is how long the server keeps a result.
	ResultMaxAge = 7 * 24 * time.Hour
)

// Options are how to reach the server: its URL and the connection's
// credentials. Each file option is a path.
type Options struct {
	// URL is nats://HOST[:PORT] (tls://, or several separated by
	// commas).
	URL string
	// Creds is a credentials file (a user JWT and its NKey seed).
	Creds string
	// NKey is an NKey seed file.
	NKey string
	// TLSCA, TLSCert and TLSKey are the CA to verify the server with and
	// the client's certificate and key.
	TLSCA, TLSCert, TLSKey string
	// Name names the connection on the server (monitoring).
	Name string
}

// CheckFiles reads the files of the options, as the connection will, and
// says what is wrong with the first that is not what it should be: the
// error names the flag and the file (a credentials file that holds no
// NKey seed is an error the server would give only once reached, and
// without saying so much).
func (o Options) CheckFiles() error {
	bad := func(flag, path string, err error) error { return fmt.Errorf("%s %s: %w", flag, path, err) }
	if o.Creds != "" {
		if err := checkCreds(o.Creds); err != nil {
			return bad("--queue-creds", o.Creds, err)
		}
	}
	if o.NKey != "" {
		if _, err := nats.NkeyOptionFromSeed(o.NKey); err != nil {
			return bad("--queue-nkey", o.NKey, fmt.Errorf("not an NKey seed file: %w", err))
		}
	}
	if o.TLSCA != "" {
		data, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return bad("--queue-tls-ca", o.TLSCA, err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			return bad("--queue-tls-ca", o.TLSCA, errors.New("no PEM certificate in it"))
		}
	}
	if o.TLSCert != "" || o.TLSKey != "" {
		if _, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey); err != nil {
			return fmt.Errorf("--queue-tls-cert %s, --queue-tls-key %s: %w", o.TLSCert, o.TLSKey, err)
		}
	}
	return nil
}

// Files returns the secret files of o, absolute (the credentials, the
// NKey seed, the TLS key): what a task's agent must not read.
func (o Options) Files() []string {
	var out []string
	for _, p := range []string{o.Creds, o.NKey, o.TLSKey} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// Conn is a connection to the server, with JetStream.
type Conn struct {
	nc *nats.Conn
	js jetstream.JetStream
	// tasks and results are the streams (Setup).
	tasks, results jetstream.Stream
}

// Connect connects to the server opts names. It gives up at once when the
// server cannot be reached (a clear error); once connected, it reconnects
// for as long as it takes.
func Connect(ctx context.Context, opts Options) (*Conn, error) {
	if err := CheckURL(opts.URL); err != nil {
		return nil, err
	}
	nopts := []nats.Option{nats.Name(opts.Name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.Timeout(10 * time.Second)}
	if opts.Creds != "" {
		if err := checkCreds(opts.Creds); err != nil {
			return nil, fmt.Errorf("credentials file %s: %w", opts.Creds, err)
		}
		nopts = append(nopts, nats.UserCredentials(opts.Creds))
	}
	if opts.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(opts.NKey)
		if err != nil {
			return nil, fmt.Errorf("NKey seed %s: %w", opts.NKey, err)
		}
		nopts = append(nopts, o)
	}
	if opts.TLSCA != "" {
		nopts = append(nopts, nats.RootCAs(opts.TLSCA))
	}
	if opts.TLSCert != "" || opts.TLSKey != "" {
		if opts.TLSCert == "" || opts.TLSKey == "" {
			return nil, errors.New("a TLS client certificate needs both its certificate and its key")
		}
		nopts = append(nopts, nats.ClientCert(opts.TLSCert, opts.TLSKey))
	}
	nc, err := nats.Connect(opts.URL, nopts...)
	if err != nil {
		if opts.Creds != "" && refused(err) {
			return nil, fmt.Errorf("the queue at %s refused the credentials file %s: %w", Redact(opts.URL), opts.Creds, err)
		}
		return nil, fmt.Errorf("cannot reach the queue at %s: %w", Redact(opts.URL), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c := &Conn{nc: nc, js: js}
	if err := c.setup(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue at %s: %w", Redact(opts.URL), err)
	}
	return c, nil
}

// checkCreds checks the credentials file path before connecting, so that
// what is wrong in a bad one is said, rather than the server refusing it
// with a bare "authorization violation": it must hold a user JWT and the
// NKey seed of that user. The error does not name the file: its callers
// do (CheckFiles with its flag, Connect as "credentials file PATH"). (nats.UserCredentials reads the file again at
// each connection: a file renewed in place is taken on reconnecting.)
func checkCreds(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			err = pe.Err // the path is in the message already
		}
		return err
	}
	defer clear(data)
	tok, err := nkeys.ParseDecoratedJWT(data)
	if err != nil {
		return err
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return fmt.Errorf("no user JWT (%w)", err)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return fmt.Errorf("no user NKey seed (%w)", err)
	}
	defer kp.Wipe()
	if pub, _ := kp.PublicKey(); pub != uc.Subject {
		return fmt.Errorf("the seed is not that of the JWT's user %s", uc.Subject)
	}
	return nil
}

// refused tells whether err is the server's refusal of the connection's
// credentials.
func refused(err error) bool {
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) || errors.Is(err, nats.ErrAuthRevoked) ||
		errors.Is(err, nats.ErrAccountAuthExpired) {
		return true
	}
	// The server's -ERR during the handshake comes as a new error.
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "authorization violation") || strings.Contains(msg, "authentication expired") ||
		strings.Contains(msg, "authentication revoked")
}

// CheckURL checks a server URL (or a comma-separated list): nats://,
// tls://, ws:// or wss:// and a host.
func CheckURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("no queue URL: want nats://HOST[:PORT]")
	}
	for part := range strings.SplitSeq(s, ",") {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil || u.Host == "" {
			return fmt.Errorf("queue URL %q: want nats://HOST[:PORT]", Redact(part))
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("queue URL %q: want nats://HOST[:PORT] (or tls://, ws://, wss://)", Redact(part))
		}
	}
	return nil
}

// Redact is the server URL s with the password (or token) of its user
// information replaced by "xxxxx", for messages. (A repository's URL goes
// through gitwork.Redact, which knows git's forms.)
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if i := strings.LastIndex(s, "@"); err != nil && i >= 0 {
			return "xxxxx" + s[i:]
		}
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	} else if strings.HasPrefix(u.Scheme, "nats") || u.Scheme == "tls" || u.Scheme == "ws" || u.Scheme == "wss" {
		// nats://TOKEN@host: the user part alone is a token.
		u.User = url.User("xxxxx")
	}
	return u.String()
}

// Close closes the connection, letting buffered messages go first.
func (c *Conn) Close() {
	c.nc.Drain()
}

// setup makes the streams when they do not exist yet, and leaves alone
// those that do (an operator may have tuned them). A worker also makes
// the consumer (SetupConsumer).
func (c *Conn) setup(ctx context.Context) error {
	streams := []jetstream.StreamConfig{
		{
			Name: TaskStream, Subjects: []string{TaskSubjects}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
			Description: "workforce: tasks waiting for a worker (workforce worker)",
		},
		{
			Name: ResultStream, Subjects: []string{ResultSubjects}, Retention: jetstream.LimitsPolicy,
			Storage: jetstream.FileStorage, MaxAge: ResultMaxAge, MaxMsgsPerSubject: ResultsPerSubject, Discard: jetstream.DiscardNew,
			DiscardNewPerSubject: true, Description: "workforce: the result of each task, once (and room for its worker's beside a forged one)",
		},
		{
			Name: AdvisoryStream, Subjects: []string{advisorySubject}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, MaxAge: ResultMaxAge,
			Description: "workforce: tasks delivered too many times, to report as failed",
		},
	}
	for i, cfg := range streams {
		s, err := c.js.Stream(ctx, cfg.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			s, err = c.js.CreateStream(ctx, cfg)
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) { // made meanwhile
				s, err = c.js.Stream(ctx, cfg.Name)
			}
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", cfg.Name, err)
		}
		switch i {
		case 0:
			c.tasks = s
		case 1:
			c.results = s
		}
	}
	return nil
}

// SetupConsumer makes the workers' consumer with ackWait when it does not
// exist. Its configuration (CachedInfo) is the one it was made with,
// which holds for every worker.
func (c *Conn) SetupConsumer(ctx context.Context, ackWait time.Duration) (jetstream.Consumer, error) {
	cons, err := c.js.Consumer(ctx, TaskStream, Consumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		cons, err = c.js.CreateConsumer(ctx, TaskStream, jetstream.ConsumerConfig{
			Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: MaxDeliver,
			DeliverPolicy: jetstream.DeliverAllPolicy, FilterSubject: TaskSubjects,
			Description: "workforce workers",
		})
		if errors.Is(err, jetstream.ErrConsumerExists) {
			cons, err = c.js.Consumer(ctx, TaskStream, Consumer)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s of %s: %w", Consumer, TaskStream, err)
	}
	return cons, nil
}
