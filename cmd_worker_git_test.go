package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWorkerGitTimeout: a git server that takes the connection and never
// answers holds a task's checkout no longer than the worker's
// --git-timeout, and the error says which limit ended it.
func TestWorkerGitTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a worker and a NATS server): runs without -short")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	g := workerGit(filepath.Join(t.TempDir(), "repos"), 2*time.Second)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- g.Checkout(context.Background(), "http://"+ln.Addr().String()+"/repo.git", strings.Repeat("a", 40), filepath.Join(t.TempDir(), "clone"))
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "--git-timeout 2s") {
			t.Errorf("checkout from a stalled server: %v, want an error naming --git-timeout", err)
		}
		t.Logf("ended after %v: %v", time.Since(start).Round(time.Second), err)
	case <-time.After(60 * time.Second):
		t.Fatal("the checkout from a stalled server was not stopped by the time limit")
	}
}
