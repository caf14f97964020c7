package queue

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWorkerGitTimeout: a git server that takes the connection and never
// answers holds a task's checkout no longer than the worker's
// --git-timeout, and the error says which limit ended it.
func TestWorkerGitTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a git server that stalls): runs without -short")
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
	g := GitWork(filepath.Join(t.TempDir(), "repos"), 2*time.Second)
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

// TestSummary: a worker's end line counts its tasks by how they ended, in
// the order of the names, and says so when it ran none.
func TestSummary(t *testing.T) {
	tests := []struct {
		counts map[string]int
		want   string
	}{
		{nil, "no tasks"},
		{map[string]int{"succeeded": 1}, "1 succeeded"},
		{map[string]int{"succeeded": 2, "failed": 1, "handed back": 3}, "1 failed, 3 handed back, 2 succeeded"},
	}
	for _, tt := range tests {
		if got := summary(tt.counts); got != tt.want {
			t.Errorf("summary(%v) = %q, want %q", tt.counts, got, tt.want)
		}
	}
}

// TestHandleSignals: the first signal drains the worker and interrupts
// nothing, the second interrupts the tasks and is the one interruptedBy
// gives, a third changes that no more.
func TestHandleSignals(t *testing.T) {
	logged := make(chan string, 8)
	w := &Worker{Log: func(format string, args ...any) { logged <- fmt.Sprintf(format, args...) }}
	sigs := make(chan os.Signal)
	interruptedBy := w.HandleSignals(sigs)
	steps := []struct {
		sig         os.Signal
		log         string
		draining    bool
		interrupted os.Signal
	}{
		{syscall.SIGTERM, "terminated: taking no more tasks; the running ones finish and report (again to interrupt them)", true, nil},
		{syscall.SIGHUP, "hangup: interrupting the running tasks; they go back to the queue", true, syscall.SIGHUP},
		{os.Interrupt, "interrupt: interrupting the running tasks; they go back to the queue", true, syscall.SIGHUP},
	}
	for i, s := range steps {
		sigs <- s.sig
		select {
		case got := <-logged:
			if got != s.log {
				t.Errorf("signal %d (%v) logged %q, want %q", i+1, s.sig, got, s.log)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("signal %d (%v) logged nothing", i+1, s.sig)
		}
		for wait := time.Now(); !w.draining.Load() && time.Since(wait) < 5*time.Second; {
			time.Sleep(time.Millisecond)
		}
		if w.draining.Load() != s.draining {
			t.Errorf("after signal %d (%v): draining %v, want %v", i+1, s.sig, w.draining.Load(), s.draining)
		}
		if got := interruptedBy(); got != s.interrupted {
			t.Errorf("after signal %d (%v): interruptedBy() = %v, want %v", i+1, s.sig, got, s.interrupted)
		}
	}
}

// TestDefaultName: a worker given no name is named by its host and its
// process.
func TestDefaultName(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	got := DefaultName()
	if want := fmt.Sprintf("%s-%d", host, os.Getpid()); got != want {
		t.Errorf("DefaultName() = %q, want %q", got, want)
	}
}

// TestLogfOneAtATime: the worker's log lines and its caller's, from many
// goroutines, reach Log one call at a time.
func TestLogfOneAtATime(t *testing.T) {
	var inside, most, calls int32
	var mu sync.Mutex
	w := &Worker{Log: func(string, ...any) {
		mu.Lock()
		inside++
		calls++
		most = max(most, inside)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		inside--
		mu.Unlock()
	}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if i%2 == 0 {
					w.Logf("caller")
				} else {
					w.logf("worker")
				}
			}
		}()
	}
	wg.Wait()
	if most != 1 || calls != 40 {
		t.Errorf("Log was called %d times, at most %d at once; want 40, one at a time", calls, most)
	}
}
