package main

// What batch --queue, batch status --queue and worker share: the flags
// that reach the queue's server and set up a worker, and the environment
// a task's run gets without them.

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/urfave/cli/v2"
)

// queueFlags are the flags that reach the queue's server, for batch,
// batch status and worker. fromEnv takes --queue's default from
// $WORKFORCE_QUEUE (worker only: batch runs on this machine unless told).
func queueFlags(fromEnv bool) []cli.Flag {
	q := &cli.StringFlag{Name: "queue", Usage: "the NATS server with JetStream: nats://HOST[:PORT] (tls://, ws://, wss://; several separated by commas)"}
	if fromEnv {
		q.EnvVars = []string{"WORKFORCE_QUEUE"}
	}
	return []cli.Flag{q,
		&cli.StringFlag{Name: "queue-creds", Usage: "a NATS credentials file (a user JWT and its NKey seed)", TakesFile: true},
		&cli.StringFlag{Name: "queue-nkey", Usage: "a NATS NKey seed file", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-ca", Usage: "the CA certificate to verify the NATS server with", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-cert", Usage: "a TLS client certificate for the NATS server (with --queue-tls-key)", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-key", Usage: "the key of --queue-tls-cert", TakesFile: true},
	}
}

// queueEnvPrefixes start the names of the variables that set a queue's
// connection, whatever reads them: workforce's own (WORKFORCE_QUEUE, and
// any WORKFORCE_QUEUE_* a flag may take one day) and the NATS tools'
// (NATS_URL, NATS_CREDS, NATS_NKEY, NATS_USER, NATS_PASSWORD, ...).
var queueEnvPrefixes = []string{"WORKFORCE_QUEUE", "NATS_"}

// queueSettingFlags are the flags whose values reach the queue's server
// or set up a worker: queueFlags and the worker's own. Their variables
// (EnvVars) are stripped from a task's environment (taskEnv), so that a
// flag added here with a variable is stripped too.
func queueSettingFlags() []cli.Flag {
	return append(queueFlags(true), workerFlags()...)
}

// queueEnvVar reports whether the variable name sets a queue's
// connection or a worker: a name of queueEnvPrefixes, or a variable a
// flag of queueSettingFlags reads.
func queueEnvVar(name string) bool {
	for _, p := range queueEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, f := range queueSettingFlags() {
		if df, ok := f.(cli.DocGenerationFlag); ok && slices.Contains(df.GetEnvVars(), name) {
			return true
		}
	}
	return false
}

// taskEnv is env without the variables of a queue (queueEnvVar): the
// environment a task's run gets, on a worker and in the local pool. The
// agent of a task must not hold the login of the worker that runs it:
// with it, it could report a forged result for every later task.
func taskEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !queueEnvVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

// queueOptions are the connection options of the command line; name
// names the connection on the server.
func queueOptions(c *cli.Context, name string) (queue.Options, error) {
	o := queue.Options{URL: c.String("queue"), Creds: c.String("queue-creds"), NKey: c.String("queue-nkey"),
		TLSCA: c.String("queue-tls-ca"), TLSCert: c.String("queue-tls-cert"), TLSKey: c.String("queue-tls-key"), Name: name}
	if err := queue.CheckURL(o.URL); err != nil {
		return o, usageError(fmt.Errorf("--queue: %w", err))
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return o, usagef("--queue-tls-cert and --queue-tls-key go together")
	}
	for flag, path := range map[string]string{"--queue-creds": o.Creds, "--queue-nkey": o.NKey, "--queue-tls-ca": o.TLSCA, "--queue-tls-cert": o.TLSCert, "--queue-tls-key": o.TLSKey} {
		if path == "" {
			continue
		}
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			return o, usagef("%s %s: not a file", flag, path)
		}
	}
	if err := o.CheckFiles(); err != nil {
		return o, usageError(err)
	}
	return o, nil
}

// queueArgs are the flags that reach the same server again, for hints:
// the URL with any password in it hidden.
func queueArgs(o queue.Options) []string {
	args := []string{"--queue", queue.Redact(o.URL)}
	for _, f := range []struct{ flag, v string }{{"--queue-creds", o.Creds}, {"--queue-nkey", o.NKey}, {"--queue-tls-ca", o.TLSCA},
		{"--queue-tls-cert", o.TLSCert}, {"--queue-tls-key", o.TLSKey}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	return args
}

// workerFlags are worker's own flags, after queueFlags.
func workerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Action: atLeast("jobs", 1), Usage: "run this many tasks at once", DefaultText: "twice the cores"},
		&cli.DurationFlag{Name: "ack-wait", Value: queue.DefaultAckWait, Action: ackWaitFlag, Usage: "how long the server waits for a sign of life of a task before it gives it to another worker; set when the consumer is made (by the first worker)"},
		&cli.StringFlag{Name: "name", Usage: "the worker's name in the results and on the server (default: the host's name and the process id)"},
		&cli.DurationFlag{Name: "git-timeout", Value: defaultGitTimeout, Action: notNegative("git-timeout"), Usage: "how long a task's checkout, and each push of its work, may take before it fails, so that a git server that stalls holds no task slot for good (0: no limit)"},
	}
}

// ackWaitFlag checks --ack-wait: a second at least, since the worker's
// signs of life come every third of it.
func ackWaitFlag(c *cli.Context, d time.Duration) error {
	if d < 0 {
		return notNegative("ack-wait")(c, d)
	}
	if d < time.Second {
		return usagef("%s --ack-wait %v: want at least 1s", commandPath(c), d)
	}
	return nil
}

// defaultGitTimeout is worker --git-timeout's default: time for a large
// repository's first fetch, not for a server that stalls.
const defaultGitTimeout = 15 * time.Minute
