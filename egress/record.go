package egress

import (
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Record is one line of the record file (network.jsonl): a connection
// (CONNECT, a forwarded port), a plain HTTP request or a broker's request,
// written when it ends; a denied one when it is refused.
type Record struct {
	Time time.Time `json:"time"`
	Host string    `json:"host"`
	Port int       `json:"port"`
	// Via is how it came: "connect", "http", "forward", "broker <provider>".
	Via     string `json:"via"`
	Allowed bool   `json:"allowed"`
	// Reason says why a denied one was denied.
	Reason string `json:"reason,omitempty"`
	// Error says why an allowed one failed (the name did not resolve, the
	// destination did not answer).
	Error string `json:"error,omitempty"`
	// Up and Down are the bytes sent to the destination and received
	// from it.
	Up   int64 `json:"up"`
	Down int64 `json:"down"`
}

// Summary is the one-shot result's "network": the mode, and per host and
// port what was allowed (connections or requests, bytes both ways) and
// denied, sorted by host then port; the lists are [] when empty.
type Summary struct {
	Mode    Mode           `json:"mode"`
	Allowed []AllowedCount `json:"allowed"`
	Denied  []DeniedCount  `json:"denied"`
}

// AllowedCount is what went to one host and port.
type AllowedCount struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
}

// DeniedCount is how often one host and port was refused.
type DeniedCount struct {
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

type hostPort struct {
	host string
	port int
}

// recorder appends records to the file and keeps the summary's counts.
type recorder struct {
	path string
	mode Mode

	mu       sync.Mutex
	f        *os.File
	opened   bool
	failed   int
	firstErr error
	allowed  map[hostPort]*AllowedCount
	denied   map[hostPort]*DeniedCount
}

func newRecorder(path string, mode Mode) *recorder {
	return &recorder{path: path, mode: mode, allowed: map[hostPort]*AllowedCount{}, denied: map[hostPort]*DeniedCount{}}
}

func (r *recorder) add(rec Record) {
	line, err := json.Marshal(rec)
	r.mu.Lock()
	defer r.mu.Unlock()
	k := hostPort{rec.Host, rec.Port}
	if rec.Allowed {
		a := r.allowed[k]
		if a == nil {
			a = &AllowedCount{Host: rec.Host, Port: rec.Port}
			r.allowed[k] = a
		}
		a.Count++
		a.Bytes += rec.Up + rec.Down
	} else {
		d := r.denied[k]
		if d == nil {
			d = &DeniedCount{Host: rec.Host, Port: rec.Port}
			r.denied[k] = d
		}
		d.Count++
	}
	if r.path == "" {
		return
	}
	if err == nil {
		err = r.open()
	}
	if err == nil {
		_, err = r.f.Write(append(line, '\n'))
	}
	if err != nil {
		r.failed++
		if r.firstErr == nil {
			r.firstErr = err
		}
	}
}

// open opens the record file once, creating it 0600 and its directory.
func (r *recorder) open() error {
	if r.f != nil {
		return nil
	}
	if r.opened {
		return errors.New("the record file " + r.path + " is not open")
	}
	r.opened = true
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	r.f = f
	return nil
}

func (r *recorder) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		r.opened = true
		return nil
	}
	r.opened = true // a record after Close is counted, not written
	err := r.f.Close()
	r.f = nil
	return err
}

func (r *recorder) failures() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed, r.firstErr
}

func (r *recorder) summary() Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Mode: r.mode, Allowed: []AllowedCount{}, Denied: []DeniedCount{}}
	for _, a := range r.allowed {
		s.Allowed = append(s.Allowed, *a)
	}
	for _, d := range r.denied {
		s.Denied = append(s.Denied, *d)
	}
	slices.SortFunc(s.Allowed, func(a, b AllowedCount) int { return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Port, b.Port)) })
	slices.SortFunc(s.Denied, func(a, b DeniedCount) int { return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Port, b.Port)) })
	return s
}
