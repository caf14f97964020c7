package queue

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Seals. A task's agent runs on a worker, and whatever reaches the
// server can publish on the results' subjects: a result published for a
// task before its worker's would be taken for it (the first result of a
// subject counted, the next refused). So each publication of a task
// carries a seal, a random key the submitter makes (NewSeal) and keeps in
// the batch's state (Record.Seal); the worker that runs the task (or the
// sweep that reports it failed) signs the result's message with it
// (HMAC-SHA256 of the message's data, in the SealHeader header), and
// every reader counts only a result its task's seal verifies
// (Result.Sealed). A worker that finds results of its task that none
// verifies runs the task and publishes its own beside them, under a
// message id of its own (the duplicate window would drop it otherwise);
// ResultStream keeps ResultsPerSubject messages a subject for that.
//
// The agent never sees a seal: it is in the task's message, which the
// worker reads, and in the submitter's state under the workforce home,
// which a confined run cannot read; and a confined run has no route to
// the server (its network namespace). A task published without a seal
// (by an older submitter) has its results taken as they come, as before.

// SealHeader is the header of a result's message that holds its seal's
// signature: the HMAC-SHA256 of the message's data, hex.
const SealHeader = "Workforce-Seal"

// ResultsPerSubject is how many results ResultStream keeps a subject
// when workforce makes it: the task's result, and room for its worker's
// when another, unsealed, came first. A stream made before keeps its own
// setting (one a subject), where a result that came first stays first.
const ResultsPerSubject = 4

// NewSeal returns a new seal: 32 random bytes, base64 (URL alphabet).
func NewSeal() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signature is the signature of data under seal.
func signature(seal string, data []byte) string {
	m := hmac.New(sha256.New, []byte(seal))
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// Sealed reports whether seal verifies r, a result read from the server:
// its message's signature is data's under seal. Any result is sealed for
// the empty seal (a task published without one).
func (r Result) Sealed(seal string) bool {
	if seal == "" {
		return true
	}
	if r.signature == "" || r.data == nil {
		return false
	}
	return hmac.Equal([]byte(r.signature), []byte(signature(seal, r.data)))
}

// decodeResult decodes a result's message, keeping what Sealed checks.
func decodeResult(data []byte, subject string, h nats.Header) (Result, error) {
	r, err := decode[Result](data, subject)
	if err == nil {
		r.data, r.signature = data, h.Get(SealHeader)
	}
	return r, err
}

// resultsOf returns every result of k's subject in ResultStream, in the
// order they came.
func (c *Conn) resultsOf(ctx context.Context, k Key) ([]Result, error) {
	last, err := c.results.GetLastMsgForSubject(ctx, k.ResultSubject())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cons, err := c.js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{k.ResultSubject()}})
	if err != nil {
		return nil, err
	}
	var out []Result
	for {
		m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			return nil, fmt.Errorf("reading the results of task %s: %w", k.Task, err)
		}
		if r, err := decodeResult(m.Data(), m.Subject(), m.Headers()); err == nil {
			out = append(out, r)
		}
		meta, err := m.Metadata()
		if err != nil {
			return nil, err
		}
		if meta.NumPending == 0 || meta.Sequence.Stream >= last.Sequence {
			return out, nil
		}
	}
}

// firstSealed returns the first of rs that seal verifies.
func firstSealed(rs []Result, seal string) (Result, bool) {
	for _, r := range rs {
		if r.Sealed(seal) {
			return r, true
		}
	}
	return Result{}, false
}
