package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/urfave/cli/v2"
)

func workerCommand() *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "run the tasks of a queue of workers (NATS JetStream), a few at a time",
		Description: `Pulls the tasks workforce batch FILE --queue publishes from the NATS
server --queue names (default $WORKFORCE_QUEUE; JetStream enabled) and runs
them, --jobs at a time (default: twice the cores): each in a clone of its
repo at the commit its ref named when it was published, as workforce run
PERSONA - --events --sync-committed --sync-deletes, with this machine's
personas, harnesses and credentials. The agent's work is pushed to the
repository as the branch workforce/<session-id>, and the result (with the
branch and the patch) goes back to the queue, once per task.

While a task runs the worker tells the server every third of the ack wait;
a worker that dies has its tasks delivered to another after the ack wait
(--ack-wait, set by the first worker, which makes the consumer; default
2m). Clones are cached in <home>/worker/repos, tasks run in
<home>/worker/tasks.

Ctrl-C (SIGINT), SIGTERM or SIGHUP: take no more tasks, let the running ones
finish and report, then exit 0. A second one interrupts them and hands
them back to the queue for another worker (exit 128+n). docs/queue.md has
the details: the server, a worker as a systemd unit or a Kubernetes
Deployment, sizing.

Example:

   workforce worker --queue nats://queue.internal:4222 --jobs 4`,
		Flags:  append(queueFlags(true), workerFlags()...),
		Action: workerAction,
	}
}

func workerAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("worker takes no arguments")
	}
	name := c.String("name")
	if name == "" {
		name = queue.DefaultName()
	}
	if !batch.SafeName(name) {
		return usagef("--name %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	}
	qo, err := queueOptions(c, "workforce worker "+name)
	if err != nil {
		return err
	}
	return runWorker(c.Context, newStreams(c), newProcEnv(), qo, workerOptions{Name: name, Jobs: c.Int("jobs"), AckWait: c.Duration("ack-wait"), GitTimeout: c.Duration("git-timeout")})
}

// workerOptions are a worker's.
type workerOptions struct {
	Name    string
	Jobs    int
	AckWait time.Duration
	// GitTimeout limits a task's checkout and each push of its work.
	GitTimeout time.Duration
}

func runWorker(ctx context.Context, ios *iostreams, env procEnv, qo queue.Options, opts workerOptions) error {
	home, err := env.home()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the workforce binary to run the tasks: %w", err)
	}
	conn, err := queue.Connect(ctx, qo)
	if err != nil {
		return err
	}
	defer conn.Close()
	jobs := batch.Jobs(opts.Jobs, nil)
	dir := homedir.WorkerDir(home)
	w := &queue.Worker{Conn: conn, Name: opts.Name, Jobs: jobs, Exe: exe, Env: taskEnv(env.Environ), Dir: dir, Git: queue.GitWork(filepath.Join(dir, "repos"), opts.GitTimeout),
		AckWait: opts.AckWait, DenyRead: qo.Files(),
		Log: func(format string, args ...any) {
			fmt.Fprintf(ios.Err, "workforce: worker %s: %s\n", opts.Name, fmt.Sprintf(format, args...))
		}}
	sigs, stop := notifyStop()
	defer stop()
	interruptedBy := w.HandleSignals(sigs)
	w.Logf("pulling tasks from %s, %d at a time", queue.Redact(qo.URL), jobs)
	if err := w.Run(ctx); err != nil {
		return err
	}
	w.Logf("stopped: %s", w.Summary())
	if sig := interruptedBy(); sig != nil {
		return silentExit(signalStatus(sig))
	}
	return nil
}
