package main

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-3bc194a6/workforce/gitwork"
	"github.com/seed-3bc194a6/workforce/queue"
)

// defaultGitTimeout is worker --git-timeout's default: time for a large
// repository's first fetch, not for a server that stalls.
const defaultGitTimeout = 15 * time.Minute

// workerGit is what a worker does with git: package gitwork, its clone
// cache in repos. A checkout, and each push of the work, fails after
// limit (0: none): the worker's git runs with its own credentials and
// talks to servers it does not control, and a stalled one would hold a
// task slot for good while the task's heartbeats keep it from any other
// worker.
func workerGit(repos string, limit time.Duration) queue.Git {
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
	return queue.Git{
		Checkout: func(ctx context.Context, url, commit, dest string) error {
			ctx, cancel := within(ctx)
			defer cancel()
			return timedOut(ctx, cache.Checkout(ctx, url, commit, dest))
		},
		Publish: func(ctx context.Context, work, url, base, branch string) (queue.Published, error) {
			ctx, cancel := within(ctx)
			defer cancel()
			p, err := gitwork.Publish(ctx, work, url, base, branch)
			return queue.Published(p), timedOut(ctx, err)
		},
	}
}
