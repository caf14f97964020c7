package queue

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/gitwork"
)

// DefaultName is the name of a worker given none: the host's name and
// the process's id, "host-1234".
func DefaultName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// HandleSignals reads sigs, the signals that stop the worker, for as long
// as the process runs: the first drains the worker (Drain: it takes no
// more tasks, the running ones finish and report), each later one
// interrupts the running tasks (Interrupt, with the signal batch.Forwarded
// makes of it), which go back to the queue. It logs each and returns at
// once; interruptedBy is the signal that first interrupted the tasks, nil
// while none did.
func (w *Worker) HandleSignals(sigs <-chan os.Signal) (interruptedBy func() os.Signal) {
	var mu sync.Mutex
	var first os.Signal
	go func() {
		n := 0
		for sig := range sigs {
			n++
			if n == 1 {
				w.logf("%v: taking no more tasks; the running ones finish and report (again to interrupt them)", sig)
				w.Drain()
				continue
			}
			mu.Lock()
			if first == nil {
				first = sig
			}
			mu.Unlock()
			w.logf("%v: interrupting the running tasks; they go back to the queue", sig)
			w.Interrupt(batch.Forwarded(sig))
		}
	}()
	return func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
}

// Summary says how many tasks the worker ran, by how they ended
// ("2 succeeded, 1 failed", in the order of the names), or "no tasks".
func (w *Worker) Summary() string {
	return summary(w.Counts())
}

// summary is Summary of counts.
func summary(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	if len(parts) == 0 {
		return "no tasks"
	}
	return strings.Join(parts, ", ")
}

// GitWork is what a worker does with git: package gitwork, its clone
// cache in repos. A checkout, and each push of the work, fails after
// limit (0: none), the error naming it as --git-timeout: the worker's
// git runs with its own credentials and talks to servers it does not
// control, and a stalled one would hold a task slot for good while the
// task's heartbeats keep it from any other worker.
func GitWork(repos string, limit time.Duration) Git {
	cache := &gitwork.Cache{Dir: repos}
	within := func(ctx context.Context) (context.Context, context.CancelFunc) {
		if limit <= 0 {
			return context.WithCancel(ctx)
		}
		return context.WithTimeout(ctx, limit)
	}
	timedOut := func(ctx context.Context, err error) error {
		if err != nil && ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("%w (--git-timeout %v)", err, limit)
		}
		return err
	}
	return Git{
		Checkout: func(ctx context.Context, url, commit, dest string) error {
			ctx, cancel := within(ctx)
			defer cancel()
			return timedOut(ctx, cache.Checkout(ctx, url, commit, dest))
		},
		Publish: func(ctx context.Context, work, url, base, branch string) (Published, error) {
			ctx, cancel := within(ctx)
			defer cancel()
			p, err := gitwork.Publish(ctx, work, url, base, branch)
			return Published(p), timedOut(ctx, err)
		},
	}
}
