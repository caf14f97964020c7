package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestPublishOnce: a key published again while its task waits is not
// queued twice; a result reported again is refused; each key has its own
// subjects.
func TestPublishOnce(t *testing.T) {
	ctx := context.Background()
	c := connect(t, startServer(t))
	keys := publish(t, c, "b.1", "a", "b")
	publish(t, c, "b.1", "a") // t1 again
	other := Key{Batch: "b.1", Submission: "s2", Task: "t1"}
	if err := c.Publish(ctx, NewTask(other, batch.Task{ID: "t1", Persona: "p", Task: "a", Repo: "r"}, commit)); err != nil {
		t.Fatal(err)
	}
	pending, err := c.Pending(ctx, "b.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 3 {
		t.Errorf("pending %v, want t1 and t2 of s1, t1 of s2", pending)
	}
	if p, _ := c.Pending(ctx, "b"); len(p) != 0 {
		t.Errorf("batch b has %v pending, want none: b.1's are not b's", p)
	}
	if err := c.PublishResult(ctx, Result{Key: keys[0], Status: report.StatusSucceeded}, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.PublishResult(ctx, Result{Key: keys[0], Status: report.StatusFailed}, ""); !errors.Is(err, ErrReported) {
		t.Errorf("a second result: %v, want ErrReported", err)
	}
	// Beyond the duplicate window (another message id), the stream
	// keeps ResultsPerSubject results a subject (TestResultsPerSubject).
	if dup, err := c.publish(ctx, keys[1].TaskSubject(), "another id", NewTask(keys[1], batch.Task{ID: "t2"}, commit)); err != nil || !dup {
		t.Errorf("the task stream took a task again under another message id (%v)", err)
	}
	if p, _ := c.Pending(ctx, "b.1"); len(p) != 3 {
		t.Errorf("pending %v after t2 was published under another message id", p)
	}
	if err := c.PublishResult(ctx, Result{Key: other, Status: report.StatusFailed}, ""); err != nil {
		t.Errorf("the result of another submission: %v", err)
	}
	r, ok, err := c.LookupResult(ctx, keys[0], "")
	if err != nil || !ok || r.Status != report.StatusSucceeded {
		t.Errorf("LookupResult = %+v, %v, %v; want the first result", r, ok, err)
	}
	if _, ok, _ := c.LookupResult(ctx, keys[1], ""); ok {
		t.Error("t2 has a result")
	}
	rs, err := c.Results(ctx, "b.1")
	if err != nil || len(rs) != 2 {
		t.Errorf("Results = %+v, %v; want two", rs, err)
	}
	// Withdraw takes a waiting task out, and is a no-op after.
	for range 2 {
		if err := c.Withdraw(ctx, other); err != nil {
			t.Fatal(err)
		}
	}
	if q, _ := c.Queued(ctx, other); q {
		t.Error("withdrawn, still queued")
	}
	if q, _ := c.Queued(ctx, keys[1]); !q {
		t.Error("t2 is not queued")
	}
}

// TestFollow: Follow gives the results there before it started and those
// that come after, of its batch only.
func TestFollow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := connect(t, startServer(t))
	k := func(b, task string) Key { return Key{Batch: b, Submission: "s", Task: task} }
	c.PublishResult(ctx, Result{Key: k("b", "t1"), Status: report.StatusSucceeded}, "")
	var mu sync.Mutex
	var got []string
	done := make(chan error)
	go func() {
		done <- c.Follow(ctx, "b", func(r Result) {
			mu.Lock()
			got = append(got, r.Task)
			mu.Unlock()
		})
	}()
	c.PublishResult(ctx, Result{Key: k("other", "t9"), Status: report.StatusSucceeded}, "")
	c.PublishResult(ctx, Result{Key: k("b", "t2"), Status: report.StatusFailed}, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "t1 t2" {
		t.Errorf("followed %v, want t1 t2", got)
	}
}

// TestSweep: a task delivered MaxDeliver times and never acked (each
// worker died) is reported failed by a sweep, once, and leaves the queue.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	c := connect(t, startServer(t))
	keys := publish(t, c, "b", "a")
	cons, err := c.SetupConsumer(ctx, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= MaxDeliver+1; i++ {
		m, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if i > MaxDeliver {
			if err == nil {
				t.Fatalf("delivered a %dth time", i)
			}
			break
		}
		if err != nil {
			t.Fatalf("delivery %d: %v", i, err)
		}
		_ = m // dies with it: no ack
	}
	var n int
	deadline := time.Now().Add(5 * time.Second)
	for n == 0 && time.Now().Before(deadline) {
		if n, err = c.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n != 1 {
		t.Fatalf("swept %d, want 1", n)
	}
	r, ok, _ := c.LookupResult(ctx, keys[0], "")
	if !ok || r.Status != report.StatusFailed || !strings.Contains(r.Error, "delivered 5 times and never reported") {
		t.Errorf("result %+v, want failed, saying why", r)
	}
	if q, _ := c.Queued(ctx, keys[0]); q {
		t.Error("the task is still queued")
	}
	if n, err := c.Sweep(ctx); n != 0 || err != nil {
		t.Errorf("a second sweep: %d, %v", n, err)
	}
}

// TestResultsPerSubject: beyond the duplicate window (another message id)
// the result stream keeps ResultsPerSubject results of a task, and
// refuses the next; LookupResult finds the first.
func TestResultsPerSubject(t *testing.T) {
	c := connect(t, startServer(t))
	ctx := context.Background()
	k := Key{Batch: "b", Submission: "s1", Task: "t1"}
	if err := c.PublishResult(ctx, Result{Key: k, Status: report.StatusSucceeded}, ""); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= ResultsPerSubject; i++ {
		if dup, err := c.publish(ctx, k.ResultSubject(), fmt.Sprint("another id ", i), Result{Key: k, Status: report.StatusFailed}); err != nil || dup {
			t.Errorf("result %d of a subject: refused (%v), want kept", i, err)
		}
	}
	if dup, err := c.publish(ctx, k.ResultSubject(), "one more id", Result{Key: k}); err != nil || !dup {
		t.Errorf("the result stream took result %d of a subject (%v)", ResultsPerSubject+1, err)
	}
	if r, ok, err := c.LookupResult(ctx, k, ""); err != nil || !ok || r.Status != report.StatusSucceeded {
		t.Errorf("LookupResult = %+v, %v, %v; want the first result", r.Status, ok, err)
	}
}
