package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/seed-3bc194a6/workforce/report"
)

// maxDeliveries is the part of the server's max-deliveries advisory a
// sweep reads.
type maxDeliveries struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries int    `json:"deliveries"`
}

// Sweep reports as failed every task the server gave up on: delivered
// MaxDeliver times and never acked (each worker that took it died, or
// failed before it could report), which the server says in an advisory
// that AdvisoryStream keeps. Its result says so, and the task leaves
// TaskStream. Workers sweep now and then, and so do the submitter and
// batch status: whoever comes first reports it (a second report is
// refused by ResultStream), so a batch never waits forever on such a
// task. It returns how many it reported.
func (c *Conn) Sweep(ctx context.Context) (int, error) {
	cons, err := c.js.CreateOrUpdateConsumer(ctx, AdvisoryStream, jetstream.ConsumerConfig{
		Durable: sweeper, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
		Description: "workforce: sweeps the tasks the workers gave up on",
	})
	if err != nil {
		return 0, fmt.Errorf("consumer %s of %s: %w", sweeper, AdvisoryStream, err)
	}
	batch, err := cons.FetchNoWait(100)
	if err != nil {
		return 0, err
	}
	tasks := c.tasks
	n := 0
	for m := range batch.Messages() {
		var adv maxDeliveries
		if json.Unmarshal(m.Data(), &adv) != nil || adv.Stream != TaskStream || adv.Consumer != Consumer {
			m.Term()
			continue
		}
		raw, err := tasks.GetMsg(ctx, adv.StreamSeq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			m.Ack() // acked or withdrawn meanwhile
			continue
		}
		if err != nil {
			m.Nak()
			return n, err
		}
		t, err := decode[Task](raw.Data, raw.Subject)
		if err != nil {
			tasks.DeleteMsg(ctx, adv.StreamSeq)
			m.Ack()
			continue
		}
		now := time.Now().UTC()
		r := Result{Key: t.Key, Digest: t.Digest, Delivery: adv.Deliveries, Status: report.StatusFailed, Started: now, Finished: now,
			Error: fmt.Sprintf("delivered %d times and never reported: each worker that took it died or failed before it could report", adv.Deliveries)}
		switch err := c.PublishResult(ctx, r, t.Seal); {
		case err == nil:
			n++
		case !errors.Is(err, ErrReported):
			m.Nak()
			return n, err
		}
		if err := tasks.DeleteMsg(ctx, adv.StreamSeq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			m.Nak()
			return n, err
		}
		m.Ack()
	}
	return n, batch.Error()
}
