package toreport

import (
	"reflect"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// The bytes each conversion prints are held by the golden files of the
// command layer (TestReportGolden, through its JSON writer); these cases
// hold what JSON tells apart: nil stays nil, empty stays empty.
func TestNilAndEmpty(t *testing.T) {
	o := persona.Origin{Layer: "user", File: "/u.json"}
	tests := []struct {
		name      string
		got, want any
	}{
		{"Each of nil", Each([]persona.Origin(nil), Origin), []report.Origin(nil)},
		{"Each of empty", Each([]persona.Origin{}, Origin), []report.Origin{}},
		{"Each of one", Each([]persona.Origin{o}, Origin), []report.Origin{{Layer: "user", File: "/u.json"}}},
		{"Ptr of nil", Ptr((*persona.Origin)(nil), Origin), (*report.Origin)(nil)},
		{"Ptr of one", Ptr(&o, Origin), &report.Origin{Layer: "user", File: "/u.json"}},
		{"Provenance of nil", Provenance(nil), map[string][]report.Origin(nil)},
		{"Provenance of one", Provenance(persona.Provenance{"id": {o}}), map[string][]report.Origin{"id": {{Layer: "user", File: "/u.json"}}}},
		{"orEmpty of nil", orEmpty(nil), []string{}},
		{"orEmpty of one", orEmpty([]string{"a"}), []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}
