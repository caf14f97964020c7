package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// resultExamples are the example results of the repository, each valid
// under the schema and printed by Result exactly as written.
var resultExamples = []string{"result-succeeded", "result-denied", "result-failed"}

func compileResultSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(ResultSchemaURL, bytes.NewReader(ResultSchema)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(ResultSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// printResult is r as the commands print it: indented, <, > and &
// as themselves.
func printResult(t *testing.T, r Result) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func validate(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return sch.Validate(doc)
}

// TestSchemasPublished checks that each embedded schema is the file at
// its documented path, and that its $id is its documented URL.
func TestSchemasPublished(t *testing.T) {
	for _, sc := range []struct {
		embedded  []byte
		path, url string
	}{
		{ResultSchema, ResultSchemaPath, ResultSchemaURL},
		{EventSchema, EventSchemaPath, EventSchemaURL},
		{EvalSchema, EvalSchemaPath, EvalSchemaURL},
	} {
		onDisk, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(sc.path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(onDisk, sc.embedded) {
			t.Errorf("the embedded schema is not the file at %s", sc.path)
		}
		var doc struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(sc.embedded, &doc); err != nil || doc.ID != sc.url {
			t.Errorf("%s: $id = %q, %v; want %q", sc.path, doc.ID, err, sc.url)
		}
	}
}

// TestResultExamples validates the example results against the schema,
// and checks that Result reads each and prints it back byte for byte.
func TestResultExamples(t *testing.T) {
	sch := compileResultSchema(t)
	for _, name := range resultExamples {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "report", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, sch, data); err != nil {
				t.Errorf("%s is not valid under the schema: %v", name, err)
			}
			var r Result
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := printResult(t, r); !bytes.Equal(got, data) {
				t.Errorf("%s reads and prints back as\n%s\nwant\n%s", name, got, data)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// fullResult sets every field, at every level.
func fullResult() Result {
	return Result{
		TaskID: "t1", SessionID: "s1", Persona: "editor", Tier: "best", Harness: "claude",
		HarnessVersion: "2.1.330", Model: "opus", HarnessSessionID: "h1",
		Status: StatusConflict, ExitCode: ptr(0), Message: "done <ok> & \u2028",
		Usage:   &Usage{InputTokens: ptr[int64](10), OutputTokens: ptr[int64](2), CachedTokens: ptr[int64](4), CostUSD: ptr(0.5), Turns: ptr(1)},
		Denials: []Denial{{Tool: "Write", Detail: "a.txt"}},
		Files: &Files{Created: []string{"a"}, Updated: []string{"b"}, Deleted: []string{"c"},
			Conflicts: []Conflict{{Path: "d", Real: "/r/d", Saved: "/s/d", Reason: "is a directory there"}}},
		Branch:     &Branch{Name: "workforce/s1", Head: strings.Repeat("a", 40), Commits: 2},
		DurationMS: 5, Warnings: []string{"w"},
		Published: &Published{Repo: "https://example.com/r.git", Branch: "workforce/s1", Base: strings.Repeat("b", 40),
			Commit: strings.Repeat("c", 40), Files: 1},
		Patch: "diff --git a/a b/a\n", Worker: "w1",
		Network: &Network{Mode: "allowlist", Allowed: []NetworkAllowed{{Host: "api.anthropic.com", Port: 443, Count: 3, Bytes: 12345}},
			Denied: []NetworkDenied{{Host: "evil.example", Port: 443, Count: 2}, {Host: "::1", Port: 8080, Count: 1}}},
	}
}

// TestResultValid validates results built in Go: every field set, and the
// least a result holds, with nil lists, which print as [].
func TestResultValid(t *testing.T) {
	sch := compileResultSchema(t)
	least := Result{SessionID: "s1", Persona: "p", Tier: "best", Harness: "codex", Status: StatusFailed, Files: &Files{}}
	quiet := least
	quiet.Network = &Network{Mode: "none"} // its lists print as []
	for name, r := range map[string]Result{"full": fullResult(), "least": least, "a network with nothing": quiet} {
		data := printResult(t, r)
		if err := validate(t, sch, data); err != nil {
			t.Errorf("%s result is not valid under the schema: %v\n%s", name, err, data)
		}
		if bytes.Contains(data, []byte("null")) {
			t.Errorf("%s result prints a null:\n%s", name, data)
		}
	}
	// What the schema must refuse.
	bad := map[string]string{
		"an unknown field":         `"extra": 1`,
		"an unknown status":        `"status": "ok"`,
		"a null exit code":         `"exitCode": null`,
		"a null list":              `"denials": null`,
		"a negative count":         `"usage": {"inputTokens": -1}`,
		"an unknown figure":        `"usage": {"tokens": 1}`,
		"a denial, no tool":        `"denials": [{"detail": "x"}]`,
		"a bare conflict":          `"files": {"created": [], "updated": [], "deleted": [], "conflicts": [{"path": "a"}]}`,
		"an empty branch":          `"branch": {"name": "b", "head": "x", "commits": 0}`,
		"a published, no base":     `"published": {"repo": "r", "files": 0}`,
		"a short base":             `"published": {"repo": "r", "base": "abc", "files": 0}`,
		"an empty patch":           `"patch": ""`,
		"an unknown network mode":  `"network": {"mode": "wide", "allowed": [], "denied": []}`,
		"a denial without a count": `"network": {"mode": "none", "allowed": [], "denied": [{"host": "a", "port": 1}]}`,
		"an allowed without bytes": `"network": {"mode": "open", "allowed": [{"host": "a", "port": 1, "count": 1}], "denied": []}`,
		"a port out of range":      `"network": {"mode": "open", "allowed": [], "denied": [{"host": "a", "port": 0, "count": 1}]}`,
	}
	for name, field := range bad {
		var doc map[string]any
		if err := json.Unmarshal(printResult(t, least), &doc); err != nil {
			t.Fatal(err)
		}
		var patch map[string]any
		if err := json.Unmarshal([]byte("{"+field+"}"), &patch); err != nil {
			t.Fatal(err)
		}
		for k, v := range patch {
			doc[k] = v
		}
		if err := sch.Validate(doc); err == nil {
			t.Errorf("the schema accepts %s: %s", name, field)
		}
	}
}

// TestResultPrintedByCommands checks that the command layer's encoder
// (json v2 with the v1 options) prints a Result as encoding/json does:
// the lists as [], nothing escaped for HTML.
func TestResultPrintedByCommands(t *testing.T) {
	opts := jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.WithIndent("  "), jsontext.EscapeForHTML(false))
	for _, r := range []Result{fullResult(), {Status: StatusFailed}} {
		var b bytes.Buffer
		if err := jsonv2.MarshalWrite(&b, r, opts); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
		if want := printResult(t, r); b.String() != string(want) {
			t.Errorf("json v2 prints\n%s\nencoding/json\n%s", b.String(), want)
		}
	}
}

// TestResultSchemaMatchesType walks Result and the schema together: at
// every level, the JSON fields of the type are the schema's properties,
// and the fields printed always (no omitempty) are the required ones.
func TestResultSchemaMatchesType(t *testing.T) {
	schemaMatchesType(t, ResultSchema, "result", reflect.TypeFor[Result](), schemaWalk{
		property: func(typ reflect.Type, name string, prop map[string]any) {
			if typ == reflect.TypeFor[Result]() {
				if d, _ := prop["description"].(string); d == "" {
					t.Errorf("schema: %s has no description", name)
				}
			}
		},
	})
}

// schemaWalk adjusts schemaMatchesType's walk: stop, when set, says
// whether a type is checked apart (and checks it); property sees each
// property of the schema the type's fields name.
type schemaWalk struct {
	stop     func(where string, typ reflect.Type, node map[string]any) bool
	property func(typ reflect.Type, name string, prop map[string]any)
}

// schemaMatchesType walks the type typ and the JSON Schema schema
// together: at every level, the JSON fields of the type are the
// schema's properties, no other property is allowed, and the fields
// printed always (no omitempty) are the required ones.
func schemaMatchesType(t *testing.T, schema []byte, rootName string, root reflect.Type, w schemaWalk) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(schema, &doc); err != nil {
		t.Fatal(err)
	}
	defs, _ := doc["$defs"].(map[string]any)
	resolve := func(node map[string]any) map[string]any {
		if ref, ok := node["$ref"].(string); ok && strings.HasPrefix(ref, "#/$defs/") {
			def, _ := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
			if def == nil {
				t.Fatalf("schema: %s names no definition", ref)
			}
			return def
		}
		return node
	}
	seen := map[reflect.Type]bool{}
	var walk func(where string, typ reflect.Type, node map[string]any)
	walk = func(where string, typ reflect.Type, node map[string]any) {
		if (w.stop != nil && w.stop(where, typ, node)) || seen[typ] {
			return
		}
		seen[typ] = true
		node = resolve(node)
		if node["additionalProperties"] != false {
			t.Errorf("schema at %s: additionalProperties is not false", where)
		}
		props, _ := node["properties"].(map[string]any)
		var fields, always, inSchema, required []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				t.Errorf("%s.%s has no JSON name", typ.Name(), f.Name)
				continue
			}
			fields = append(fields, name)
			if !strings.Contains(opts, "omitempty") {
				always = append(always, name)
			}
			prop, _ := props[name].(map[string]any)
			if prop == nil {
				t.Errorf("%s.%s (%q) is not in the schema at %s", typ.Name(), f.Name, name, where)
				continue
			}
			if w.property != nil {
				w.property(typ, name, prop)
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				if ft.Kind() == reflect.Slice {
					prop, _ = resolve(prop)["items"].(map[string]any)
				}
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(where+"."+name, ft, prop)
			}
		}
		for k := range props {
			inSchema = append(inSchema, k)
		}
		req, _ := node["required"].([]any)
		for _, r := range req {
			required = append(required, r.(string))
		}
		for _, l := range [][]string{fields, always, inSchema, required} {
			sort.Strings(l)
		}
		if !slices.Equal(fields, inSchema) {
			t.Errorf("schema at %s: properties %v, but %s has the fields %v", where, inSchema, typ.Name(), fields)
		}
		if !slices.Equal(always, required) {
			t.Errorf("schema at %s: required %v, but %s always prints %v", where, required, typ.Name(), always)
		}
	}
	walk(rootName, root, doc)
}

func TestDecideStatus(t *testing.T) {
	ran := Outcome{Started: true, Parsed: true}
	with := func(f func(*Outcome)) Outcome { o := ran; f(&o); return o }
	tests := []struct {
		name string
		in   Outcome
		want Status
	}{
		{"exit 0 with a result", ran, StatusSucceeded},
		{"claude exits 0 with a Write denied", with(func(o *Outcome) { o.Denials = true }), StatusDenied},
		{"opencode exits 0 with a permission rejected", with(func(o *Outcome) { o.Denials = true }), StatusDenied},
		{"a denial with a non-zero exit", with(func(o *Outcome) { o.Denials, o.ExitCode = true, 1 }), StatusDenied},
		{"a denial and an error reported", with(func(o *Outcome) { o.Denials, o.HarnessError = true, true }), StatusDenied},
		{"claude exits 1 with subtype success on an HTTP 400", with(func(o *Outcome) { o.ExitCode = 1 }), StatusFailed},
		{"a harness exits 144 after an HTTP 400", with(func(o *Outcome) { o.ExitCode = 144 }), StatusFailed},
		{"exit 0 with an error reported", with(func(o *Outcome) { o.HarnessError = true }), StatusFailed},
		{"codex turn.failed", with(func(o *Outcome) { o.ExitCode, o.HarnessError = 1, true }), StatusFailed},
		{"exit 0 with no parsable result", with(func(o *Outcome) { o.Parsed = false }), StatusFailed},
		{"truncated output, exit 1", with(func(o *Outcome) { o.Parsed, o.ExitCode = false, 1 }), StatusFailed},
		{"killed by a signal of its own", with(func(o *Outcome) { o.Signal, o.Parsed = 9, false }), StatusFailed},
		{"killed by a signal after a result", with(func(o *Outcome) { o.Signal = 15 }), StatusFailed},
		{"never started", Outcome{}, StatusFailed},
		{"sync-back could not write a file", with(func(o *Outcome) { o.WorkFailed = true }), StatusFailed},
		{"a denial and sync-back failed", with(func(o *Outcome) { o.WorkFailed, o.Denials = true, true }), StatusDenied},
		{"conflicts and sync-back failed", with(func(o *Outcome) { o.WorkFailed, o.Conflicts = true, true }), StatusConflict},
		{"conflicts after success", with(func(o *Outcome) { o.Conflicts = true }), StatusConflict},
		{"conflicts and denials", with(func(o *Outcome) { o.Conflicts, o.Denials = true, true }), StatusConflict},
		{"conflicts after a failure", with(func(o *Outcome) { o.Conflicts, o.ExitCode = true, 1 }), StatusConflict},
		{"the time limit", with(func(o *Outcome) { o.TimedOut, o.Signal, o.Parsed = true, 15, false }), StatusTimedOut},
		{"the time limit with conflicts and denials", with(func(o *Outcome) { o.TimedOut, o.Conflicts, o.Denials = true, true, true }), StatusTimedOut},
		{"SIGTERM during the run: claude prints no JSON", with(func(o *Outcome) { o.Interrupted, o.Signal, o.Parsed = true, 15, false }), StatusInterrupted},
		{"interrupted after the time limit", with(func(o *Outcome) { o.Interrupted, o.TimedOut, o.Conflicts = true, true, true }), StatusInterrupted},
		{"interrupted before the harness started", Outcome{Interrupted: true}, StatusInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecideStatus(tt.in); got != tt.want {
				t.Errorf("DecideStatus(%+v) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func ExampleDecideStatus() {
	// claude exited 0, but a Write was denied.
	fmt.Println(DecideStatus(Outcome{Started: true, Parsed: true, Denials: true}))
	// claude exited 1 with subtype "success" after an HTTP 400.
	fmt.Println(DecideStatus(Outcome{Started: true, Parsed: true, ExitCode: 1}))
	// Output:
	// denied
	// failed
}

// TestNetworkDeniedHosts: the denied destinations as the summaries name
// them, an IPv6 address in brackets.
func TestNetworkDeniedHosts(t *testing.T) {
	r := fullResult()
	if got := strings.Join(r.Network.DeniedHosts(), " "); got != "evil.example:443 [::1]:8080" {
		t.Errorf("DeniedHosts() = %q", got)
	}
	var none *Network
	if got := none.DeniedHosts(); got != nil {
		t.Errorf("nil.DeniedHosts() = %q, want nil", got)
	}
}

// TestSummarizeNetwork: the proxy's records of a run, summed per
// destination in the order of first sight, allowed with their bytes both
// ways, denied counted.
func TestSummarizeNetwork(t *testing.T) {
	recs := []NetworkRecord{
		{Host: "api.anthropic.com", Port: 443, Allowed: true, Up: 10, Down: 100},
		{Host: "evil.example", Port: 443},
		{Host: "api.anthropic.com", Port: 443, Allowed: true, Up: 1, Down: 2},
		{Host: "evil.example", Port: 80},
		{Host: "evil.example", Port: 443},
	}
	got := SummarizeNetwork("allowlist", recs)
	want := &Network{Mode: "allowlist",
		Allowed: []NetworkAllowed{{Host: "api.anthropic.com", Port: 443, Count: 2, Bytes: 113}},
		Denied:  []NetworkDenied{{Host: "evil.example", Port: 443, Count: 2}, {Host: "evil.example", Port: 80, Count: 1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SummarizeNetwork = %+v, want %+v", got, want)
	}
	if got := SummarizeNetwork("none", nil); got.Allowed != nil || got.Denied != nil || got.Mode != "none" {
		t.Errorf("SummarizeNetwork(none, nil) = %+v", got)
	}
}
