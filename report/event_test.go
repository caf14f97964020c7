package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

func compileEventSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for url, data := range map[string][]byte{ResultSchemaURL: ResultSchema, EventSchemaURL: EventSchema} {
		if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile(EventSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// someEvents are an event of each type, each field of its type set.
func someEvents() []Event {
	at := time.Date(2026, 11, 24, 23, 48, 35, 705_123_456, time.FixedZone("CET", 3600))
	r := fullResult()
	base := Event{Time: at, TaskID: "t1", SessionID: "s1"}
	with := func(f func(*Event)) Event { e := base; f(&e); return e }
	return []Event{
		with(func(e *Event) { e.Type, e.HarnessSessionID = EventStarted, "h1" }),
		with(func(e *Event) { e.Type, e.Tool, e.Detail, e.Status = EventToolUse, "Write", "a <b> & c", "denied" }),
		with(func(e *Event) { e.Type, e.Text = EventMessage, "done \u2028" }),
		with(func(e *Event) {
			e.Type, e.Usage = EventUsage, &Usage{InputTokens: ptr[int64](1), OutputTokens: ptr[int64](2), CachedTokens: ptr[int64](0), CostUSD: ptr(0.1), Turns: ptr(1)}
		}),
		with(func(e *Event) { e.Type, e.Text = EventError, "unexpected status 400" }),
		with(func(e *Event) { e.Type, e.Host, e.Port = EventNetwork, "evil.example", 443 }),
		with(func(e *Event) { e.Type, e.Path, e.Action = EventSync, "out.txt", "created" }),
		with(func(e *Event) { e.Type, e.Result = EventFinished, &r }),
	}
}

// printEvent is e as run --events prints it: one line, <, > and & as
// themselves.
func printEvent(t *testing.T, e Event) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestEventValid validates an event of each type, with every field of
// its type, and the least of each, and checks what the schema refuses.
func TestEventValid(t *testing.T) {
	sch := compileEventSchema(t)
	seen := map[EventType]bool{}
	for _, e := range someEvents() {
		seen[e.Type] = true
		data := printEvent(t, e)
		if err := validate(t, sch, data); err != nil {
			t.Errorf("%s event is not valid under the schema: %v\n%s", e.Type, err, data)
		}
		if !bytes.HasPrefix(data, []byte(`{"type":"`+string(e.Type)+`","time":"2026-11-24T22:48:35.705Z",`)) {
			t.Errorf("%s event does not start with its type and its time in UTC to the millisecond: %s", e.Type, data)
		}
		if bytes.Contains(data, []byte("null")) || bytes.Contains(data, []byte(`\u003c`)) {
			t.Errorf("%s event prints a null or escapes < for HTML: %s", e.Type, data)
		}
		var back Event
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if again := printEvent(t, back); !bytes.Equal(again, data) {
			t.Errorf("%s event reads and prints back as\n%s\nwant\n%s", e.Type, again, data)
		}
		least := Event{Type: e.Type, Time: e.Time, SessionID: e.SessionID, HarnessSessionID: e.HarnessSessionID,
			Tool: e.Tool, Text: e.Text, Usage: &Usage{}, Path: e.Path, Action: e.Action, Result: e.Result, Host: e.Host, Port: e.Port}
		if e.Type != EventUsage {
			least.Usage = nil
		}
		if err := validate(t, sch, printEvent(t, least)); err != nil {
			t.Errorf("the least %s event is not valid: %v", e.Type, err)
		}
	}
	if len(seen) != len(EventTypes) {
		t.Errorf("someEvents has the types %v, want all of %v", seen, EventTypes)
	}
	bad := map[string]string{
		"an unknown type":                  `{"type":"progress","time":"2026-11-24T22:48:35.705Z","sessionId":"s1"}`,
		"no session id":                    `{"type":"message","time":"2026-11-24T22:48:35.705Z","text":"x"}`,
		"no time":                          `{"type":"message","sessionId":"s1","text":"x"}`,
		"a time not in UTC":                `{"type":"message","time":"2026-11-24T23:48:35.705+01:00","sessionId":"s1","text":"x"}`,
		"a field of another type":          `{"type":"message","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","text":"x","tool":"Write"}`,
		"started without the harness's id": `{"type":"started","time":"2026-11-24T22:48:35.705Z","sessionId":"s1"}`,
		"a tool use without a tool":        `{"type":"tool_use","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","detail":"a"}`,
		"an unknown tool status":           `{"type":"tool_use","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","tool":"Write","status":"running"}`,
		"an unknown sync action":           `{"type":"sync","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","path":"a","action":"copied"}`,
		"a negative usage":                 `{"type":"usage","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","usage":{"inputTokens":-1}}`,
		"a network event without a port":   `{"type":"network","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","host":"a.com"}`,
		"finished without its result":      `{"type":"finished","time":"2026-11-24T22:48:35.705Z","sessionId":"s1"}`,
		"finished with a bad result":       `{"type":"finished","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","result":{"status":"ok"}}`,
	}
	for name, doc := range bad {
		if err := validate(t, sch, []byte(doc)); err == nil {
			t.Errorf("the schema accepts %s: %s", name, doc)
		}
	}
}

// TestEventSchemaMatchesType checks that the JSON fields of Event are the
// properties of the schema's branches, one branch a type, each with its
// common fields required and nothing else allowed.
func TestEventSchemaMatchesType(t *testing.T) {
	var root struct {
		OneOf []struct {
			Title                string         `json:"title"`
			Description          string         `json:"description"`
			Required             []string       `json:"required"`
			AdditionalProperties *bool          `json:"additionalProperties"`
			Properties           map[string]any `json:"properties"`
		} `json:"oneOf"`
	}
	if err := json.Unmarshal(EventSchema, &root); err != nil {
		t.Fatal(err)
	}
	var fields []string
	typ := reflect.TypeFor[Event]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	var types []EventType
	props := map[string]bool{}
	for _, b := range root.OneOf {
		types = append(types, EventType(b.Title))
		if b.AdditionalProperties == nil || *b.AdditionalProperties || b.Description == "" {
			t.Errorf("branch %s: additionalProperties must be false, and a description given", b.Title)
		}
		if tp, _ := b.Properties["type"].(map[string]any); tp["const"] != b.Title {
			t.Errorf("branch %s: type is %v", b.Title, b.Properties["type"])
		}
		if len(b.Required) < 3 || !slices.Equal(b.Required[:3], []string{"type", "time", "sessionId"}) {
			t.Errorf("branch %s: required %v, want type, time and sessionId first", b.Title, b.Required)
		}
		for k := range b.Properties {
			props[k] = true
		}
	}
	if !slices.Equal(types, EventTypes) {
		t.Errorf("schema branches %v, want EventTypes %v", types, EventTypes)
	}
	var inSchema []string
	for k := range props {
		inSchema = append(inSchema, k)
	}
	sort.Strings(fields)
	sort.Strings(inSchema)
	if !slices.Equal(fields, inSchema) {
		t.Errorf("schema properties %v, but Event has the fields %v", inSchema, fields)
	}
}
