package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// TestEvalSchemaMatchesType walks Eval and its schema together, as
// TestResultSchemaMatchesType walks Result: at every level the JSON
// fields of the type are the schema's properties and the fields always
// printed its required ones; the one-shot result is a reference to the
// result's own schema.
func TestEvalSchemaMatchesType(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal(EvalSchema, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
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
		if typ == reflect.TypeFor[Result]() {
			if node["$ref"] != ResultSchemaURL {
				t.Errorf("schema at %s: want a $ref to %s", where, ResultSchemaURL)
			}
			return
		}
		if seen[typ] {
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
			fields = append(fields, name)
			if !strings.Contains(opts, "omitempty") {
				always = append(always, name)
			}
			prop, _ := props[name].(map[string]any)
			if prop == nil {
				t.Errorf("%s.%s (%q) is not in the schema at %s", typ.Name(), f.Name, name, where)
				continue
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
	walk("eval", reflect.TypeFor[Eval](), root)
}

// TestEvalValid validates an evaluation's report, with an attempt that
// carries a result and one that does not, against the schema.
func TestEvalValid(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for url, doc := range map[string][]byte{ResultSchemaURL: ResultSchema, EvalSchemaURL: EvalSchema} {
		if err := c.AddResource(url, bytes.NewReader(doc)); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile(EvalSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	half, cost := 0.5, 0.25
	e := Eval{ID: "e1", File: "/cases.yaml", K: 2, Warnings: []string{},
		Personas: []EvalPersona{{Persona: "p", Tier: "best", Harness: "claude", Hash: "abc", Attempts: 2, Passed: 1, Errors: 1,
			PassRate: &half, CostUSD: EvalStat{Mean: &cost, Median: &cost, Known: 1}}},
		Cases: []EvalCase{{Case: "c1", Personas: []EvalCasePersona{{Persona: "p", Tier: "best", Harness: "claude", Outcomes: []EvalOutcome{OutcomePass, OutcomeError}, Passed: 1, Errors: 1}}}},
		Attempts: []EvalAttempt{
			{Case: "c1", Persona: "p", Tier: "best", Harness: "claude", Attempt: 1, TaskID: "c1.p", Outcome: OutcomePass, Reasons: []string{}, Failed: []string{}, Unchecked: []string{},
				Check: &EvalStep{ExitCode: 0}, Result: &Result{Persona: "p", Tier: "best", Harness: "claude", Status: StatusSucceeded, Denials: []Denial{}, Warnings: []string{}}},
			{Case: "c1", Persona: "p", Tier: "best", Harness: "claude", Attempt: 2, TaskID: "c1.p.2", Outcome: OutcomeError, Reasons: []string{"no result"}, Failed: []string{}, Unchecked: []string{}},
		}}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, sch, data); err != nil {
		t.Errorf("the report is not valid under the schema: %v", err)
	}
	bad := bytes.Replace(data, []byte(`"outcome":"error"`), []byte(`"outcome":"broken"`), 1)
	if err := validate(t, sch, bad); err == nil {
		t.Error("an unknown outcome is valid under the schema")
	}
}
