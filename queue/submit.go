package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errPerSubject is the server's refusal of a second message on a subject
// of a stream that keeps one a subject and discards new ones.
const errPerSubject = "maximum messages per subject exceeded"

// ErrReported is PublishResult's error when the task's subject has a
// result already: another worker reported it first.
var ErrReported = errors.New("the task has a result already")

// publish publishes data on subject with the message id id; a message
// the server refuses as the second of its subject (ErrReported) or drops
// as a duplicate of its id is not an error but for dup.
func (c *Conn) publish(ctx context.Context, subject, id string, v any) (dup bool, err error) {
	data, err := json.Marshal(v)
	if err != nil {
		return false, err
	}
	return c.publishData(ctx, subject, id, data, nil)
}

// publishData is publish of data as it is, with the headers of h besides
// the message id.
func (c *Conn) publishData(ctx context.Context, subject, id string, data []byte, h nats.Header) (dup bool, err error) {
	msg := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	for k, v := range h {
		msg.Header[k] = v
	}
	msg.Header.Set(jetstream.MsgIDHeader, id)
	ack, err := c.js.PublishMsg(ctx, msg)
	if err != nil {
		if strings.Contains(err.Error(), errPerSubject) {
			return true, nil
		}
		return false, err
	}
	return ack.Duplicate, nil
}

// Publish puts task t in TaskStream. Publishing a key again is a no-op
// while its task is in the stream (one message a subject) and within the
// duplicate window (its message id).
func (c *Conn) Publish(ctx context.Context, t Task) error {
	if _, err := c.publish(ctx, t.TaskSubject(), t.MsgID(), t); err != nil {
		return fmt.Errorf("cannot publish task %s: %w", t.Task, err)
	}
	return nil
}

// PublishResult reports r on its subject, once, signed with seal (the
// task's, seal.go): ErrReported when the subject has a result already.
func (c *Conn) PublishResult(ctx context.Context, r Result, seal string) error {
	return c.publishResult(ctx, r, seal, false)
}

// publishResult is PublishResult; beside publishes r next to results of
// its subject that its seal does not verify, under a message id of its
// own, so that neither the duplicate window nor an earlier message's id
// drops it.
func (c *Conn) publishResult(ctx context.Context, r Result, seal string, beside bool) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	id, h := r.MsgID(), nats.Header{}
	if seal != "" {
		sig := signature(seal, data)
		h.Set(SealHeader, sig)
		if beside {
			id += "/" + sig[:16]
		}
	}
	dup, err := c.publishData(ctx, r.ResultSubject(), id, data, h)
	switch {
	case err != nil:
		return fmt.Errorf("cannot report task %s: %w", r.Task, err)
	case dup:
		return ErrReported
	}
	return nil
}

// LookupResult returns the first result of k that seal verifies (all do
// for an empty seal); ok false when it has none yet.
func (c *Conn) LookupResult(ctx context.Context, k Key, seal string) (r Result, ok bool, err error) {
	rs, err := c.resultsOf(ctx, k)
	if err != nil {
		return Result{}, false, err
	}
	r, ok = firstSealed(rs, seal)
	return r, ok, nil
}

// Queued reports whether k's task is still in TaskStream: waiting for a
// worker, or running (a worker acks it once its result is out).
func (c *Conn) Queued(ctx context.Context, k Key) (bool, error) {
	_, err := c.tasks.GetLastMsgForSubject(ctx, k.TaskSubject())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Withdraw removes k's task from TaskStream, when it is still there: a
// worker that runs it already runs it to its end, but no other will.
func (c *Conn) Withdraw(ctx context.Context, k Key) error {
	m, err := c.tasks.GetLastMsgForSubject(ctx, k.TaskSubject())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.tasks.DeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) && !errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) {
		return err
	}
	return nil
}

// Results returns the results of batch id in ResultStream now, in the
// order they came.
func (c *Conn) Results(ctx context.Context, id string) ([]Result, error) {
	cons, err := c.js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{batchResults(id)}})
	if err != nil {
		return nil, err
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, err
	}
	var out []Result
	for left := info.NumPending; left > 0; {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return nil, fmt.Errorf("reading the results of batch %s: %w", id, err)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, err
		}
		left = meta.NumPending
		if r, err := decodeResult(m.Data(), m.Subject(), m.Headers()); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// Follow calls fn with each result of batch id as it comes, from the
// first in ResultStream, until ctx ends (nil) or the subscription fails.
// fn runs on one goroutine at a time.
func (c *Conn) Follow(ctx context.Context, id string, fn func(Result)) error {
	cons, err := c.js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{batchResults(id)}})
	if err != nil {
		return err
	}
	failed := make(chan error, 1)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if r, err := decodeResult(m.Data(), m.Subject(), m.Headers()); err == nil {
			fn(r)
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			select {
			case failed <- err:
			default:
			}
		}
	}))
	if err != nil {
		return err
	}
	defer cc.Stop()
	select {
	case <-ctx.Done():
		return nil
	case err := <-failed:
		return err
	}
}

// Pending returns the keys of batch id's tasks in TaskStream now
// (waiting for a worker or running).
func (c *Conn) Pending(ctx context.Context, id string) ([]Key, error) {
	info, err := c.tasks.Info(ctx, jetstream.WithSubjectFilter(batchTasks(id)))
	if err != nil {
		return nil, err
	}
	var out []Key
	for subj := range info.State.Subjects {
		if k, err := KeyOf(subj); err == nil {
			out = append(out, k)
		}
	}
	return out, nil
}
