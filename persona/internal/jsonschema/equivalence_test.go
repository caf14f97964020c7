package jsonschema_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	upstream "github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/seed-3bc194a6/workforce/persona/internal/jsonschema"
)

const schemaURL = "https://github.com/seed-3bc194a6/workforce/persona/schema/persona.schema.json"

// validators compiles the persona schema with this copy and with the
// library it was copied from.
func validators(t testing.TB) (func(any) error, func(any) error) {
	t.Helper()
	raw, err := os.ReadFile("../../schema/persona.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	mine, err := c.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	u := upstream.NewCompiler()
	u.Draft = upstream.Draft2020
	if err := u.AddResource(schemaURL, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	theirs, err := u.Compile(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return func(v any) error { return mine.Validate(v) }, func(v any) error { return theirs.Validate(v) }
}

// corpus returns every persona JSON of the repository's tests: the files
// of testdata and personas, and the .json files of the test scripts.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, root := range []string{"../../../testdata", "../../../personas"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case strings.HasSuffix(path, ".txtar"):
				ar, err := txtar.ParseFile(path)
				if err != nil {
					return err
				}
				for _, f := range ar.Files {
					if strings.HasSuffix(f.Name, ".json") {
						out[path+":"+f.Name] = f.Data
					}
				}
			case strings.HasSuffix(path, ".json") && !strings.HasSuffix(path, "schema.json"):
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				out[path] = data
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d documents found", len(out))
	}
	return out
}

// same reports whether the two validators agree on data: both accept it,
// or both reject it with the same errors.
func same(t testing.TB, mine, theirs func(any) error, data []byte) {
	t.Helper()
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return
	}
	a, b := mine(doc), theirs(doc)
	if (a == nil) != (b == nil) {
		t.Fatalf("the copy and the library disagree on\n%s\ncopy:    %v\nlibrary: %v", data, a, b)
	}
	var ve *jsonschema.ValidationError
	var ue *upstream.ValidationError
	if a != nil && asValidation(a, &ve) && asValidation2(b, &ue) && normalize(ve.GoString()) != normalize(ue.GoString()) {
		t.Fatalf("the copy and the library explain\n%s\ndifferently:\n%s\n%s", data, ve.GoString(), ue.GoString())
	}
}

// normalize sorts the names of "additionalProperties 'a', 'b' not
// allowed", which the library lists in map order, and the lines.
func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		head, rest, ok := strings.Cut(l, "additionalProperties '")
		if !ok {
			continue
		}
		names, tail, _ := strings.Cut(rest, "' not allowed")
		list := strings.Split(names, "', '")
		sort.Strings(list)
		lines[i] = head + "additionalProperties '" + strings.Join(list, "', '") + "' not allowed" + tail
	}
	// The order of the causes follows map order too.
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func asValidation(err error, ve **jsonschema.ValidationError) bool {
	v, ok := err.(*jsonschema.ValidationError)
	*ve = v
	return ok
}

func asValidation2(err error, ve **upstream.ValidationError) bool {
	v, ok := err.(*upstream.ValidationError)
	*ve = v
	return ok
}

func TestSameAsTheLibrary(t *testing.T) {
	mine, theirs := validators(t)
	rejected := 0
	for name, data := range corpus(t) {
		t.Run(name, func(t *testing.T) { same(t, mine, theirs, data) })
		var doc any
		if json.Unmarshal(data, &doc) == nil && mine(doc) != nil {
			rejected++
		}
	}
	if rejected == 0 {
		t.Error("no document of the corpus is rejected: the comparison of errors is not exercised")
	}
}

func FuzzSameAsTheLibrary(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	mine, theirs := validators(f)
	f.Fuzz(func(t *testing.T, data []byte) { same(t, mine, theirs, data) })
}
