package main

import (
	"context"

	"github.com/seed-3bc194a6/workforce/gitwork"
	"github.com/seed-3bc194a6/workforce/queue"
)

// workerGit is what a worker does with git: package gitwork, its clone
// cache in repos.
func workerGit(repos string) queue.Git {
	cache := &gitwork.Cache{Dir: repos}
	return queue.Git{
		Checkout: cache.Checkout,
		Publish: func(ctx context.Context, work, url, base, branch string) (queue.Published, error) {
			p, err := gitwork.Publish(ctx, work, url, base, branch)
			return queue.Published(p), err
		},
	}
}

// gitResolveRef resolves a task's ref to a commit, as the submitter
// publishes it.
func gitResolveRef(ctx context.Context, url, ref string) (string, error) {
	return gitwork.ResolveRef(ctx, url, ref)
}
