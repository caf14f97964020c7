package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// TestEvalSchemaMatchesType walks Eval and its schema together, as
// TestResultSchemaMatchesType walks Result: at every level the JSON
// fields of the type are the schema's properties and the fields always
// printed its required ones; the one-shot result is a reference to the
// result's own schema.
func TestEvalSchemaMatchesType(t *testing.T) {
	schemaMatchesType(t, EvalSchema, "eval", reflect.TypeFor[Eval](), schemaWalk{
		stop: func(where string, typ reflect.Type, node map[string]any) bool {
			if typ != reflect.TypeFor[Result]() {
				return false
			}
			if node["$ref"] != ResultSchemaURL {
				t.Errorf("schema at %s: want a $ref to %s", where, ResultSchemaURL)
			}
			return true
		},
	})
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
