package home

// This file reads and writes the keys of config.json that create and pick
// take: "create": {"saveIn": "..."} and "pick": {"harness", "model",
// "timeout"}. ReadConfig keeps them as they are (the rest of the file),
// so that a rewrite by sources add loses nothing; these functions read
// them when the command that uses them runs, and a bad value is an error
// of that command only.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/tailscale/hujson"
)

// CreateConfig is "create" in config.json.
type CreateConfig struct {
	// SaveIn is where create installs a new persona unless
	// --save-in-directory says otherwise: cwd, user, dir:N, library or a
	// path. Empty when unset.
	SaveIn string
}

// PickConfig is "pick" in config.json: the harness and model pick asks,
// and how long it waits for the answer. Empty or zero fields are unset.
type PickConfig struct {
	Harness string
	Model   string
	Timeout time.Duration
}

// readKey returns the value of the top-level key of <home>/config.json,
// nil when the file or the key is absent, and the file's path.
func readKey(home, key string) (json.RawMessage, string, error) {
	path := ConfigPath(home)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, path, nil
	}
	if err != nil {
		return nil, path, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, path, diag.JSONError(path, data, err)
	}
	return raw[key], path, nil
}

// object reads v, the value of field in the config file path, as an
// object whose keys are among known.
func object(path, field string, v json.RawMessage, shape string, known ...string) (map[string]json.RawMessage, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return nil, &diag.Diagnostic{File: path, Field: field, Message: "must be an object such as " + shape}
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(known, k) {
			return nil, &diag.Diagnostic{File: path, Field: field + "." + k, Message: fmt.Sprintf("unknown key: %s takes %s", field, strings.Join(known, ", "))}
		}
	}
	return raw, nil
}

// stringField reads raw[key] of the object field as a string that is not
// empty; "" when absent.
func stringField(path, field, key string, raw map[string]json.RawMessage) (string, error) {
	v, ok := raw[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil || strings.TrimSpace(s) == "" {
		return "", &diag.Diagnostic{File: path, Field: field + "." + key, Message: fmt.Sprintf("must be a string that is not empty, not %s", v)}
	}
	return s, nil
}

// createShape is what "create" looks like, for its errors.
const createShape = `{"saveIn": "user"}`

// ReadCreateConfig reads "create" of <home>/config.json. A missing file
// or key is the zero CreateConfig; errors are *diag.Diagnostic values
// naming the file and the field.
func ReadCreateConfig(home string) (CreateConfig, error) {
	v, path, err := readKey(home, "create")
	if err != nil || v == nil {
		return CreateConfig{}, err
	}
	raw, err := object(path, "create", v, createShape, "saveIn")
	if err != nil {
		return CreateConfig{}, err
	}
	s, err := stringField(path, "create", "saveIn", raw)
	return CreateConfig{SaveIn: s}, err
}

// ReadPickConfig reads "pick" of <home>/config.json. A missing file or
// key is the zero PickConfig; errors are *diag.Diagnostic values naming
// the file and the field. The harness's name is not checked here.
func ReadPickConfig(home string) (PickConfig, error) {
	v, path, err := readKey(home, "pick")
	if err != nil || v == nil {
		return PickConfig{}, err
	}
	raw, err := object(path, "pick", v, `{"harness": "claude", "model": "claude-haiku-4-5", "timeout": "60s"}`, "harness", "model", "timeout")
	if err != nil {
		return PickConfig{}, err
	}
	var c PickConfig
	if c.Harness, err = stringField(path, "pick", "harness", raw); err != nil {
		return PickConfig{}, err
	}
	if c.Model, err = stringField(path, "pick", "model", raw); err != nil {
		return PickConfig{}, err
	}
	t, err := stringField(path, "pick", "timeout", raw)
	if err != nil {
		return PickConfig{}, err
	}
	if t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return PickConfig{}, &diag.Diagnostic{File: path, Field: "pick.timeout", Message: fmt.Sprintf(`%q is not a duration above zero such as "60s" or "2m"`, t)}
		}
		c.Timeout = d
	}
	return c, nil
}

// SetCreateSaveIn sets "create": {"saveIn": saveIn} in <home>/config.json,
// atomically, and leaves the rest of the file as it is, byte for byte:
// its other keys, their order and layout, and the other keys of
// "create". A file that is not a JSON object, or whose "create" is not an
// object, is an error naming the file, and is not written.
func SetCreateSaveIn(home, saveIn string) error {
	path := ConfigPath(home)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, err := withSaveIn(path, data, saveIn)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	return renameio.WriteFile(path, out, 0o644, renameio.WithTempDir(filepath.Dir(path)))
}

// withSaveIn returns data, the config file path (nil: none yet), with
// create.saveIn set to saveIn.
func withSaveIn(path string, data []byte, saveIn string) ([]byte, error) {
	if !utf8.ValidString(saveIn) || saveIn == "" {
		return nil, fmt.Errorf("%s: create.saveIn: %q is not a value JSON can hold as it is (empty, or not UTF-8)", path, saveIn)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		b, err := json.MarshalIndent(map[string]any{"create": map[string]string{"saveIn": saveIn}}, "", "  ")
		return append(b, '\n'), err
	}
	// Strict JSON first: the parser below also takes comments and
	// trailing commas, which config.json may not hold.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, diag.JSONError(path, data, err)
	}
	if raw == nil {
		return nil, &diag.Diagnostic{File: path, Message: "must be a JSON object"}
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	value, err := json.Marshal(saveIn)
	if err != nil {
		return nil, err
	}
	// A key twice: which one counts is the reader's choice; say so
	// rather than guess.
	if twice(v.Value.(*hujson.Object), "create") {
		return nil, &diag.Diagnostic{File: path, Field: "create", Message: "appears more than once"}
	}
	if c, ok := raw["create"]; ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(c, &m); err != nil || m == nil {
			return nil, &diag.Diagnostic{File: path, Field: "create", Message: "must be an object such as " + createShape}
		}
		create := v.Find("/create").Value.(*hujson.Object)
		if twice(create, "saveIn") {
			return nil, &diag.Diagnostic{File: path, Field: "create.saveIn", Message: "appears more than once"}
		}
		had := len(create.Members)
		if err := v.Patch([]byte(`[{"op": "add", "path": "/create/saveIn", "value": ` + string(value) + `}]`)); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		create = v.Find("/create").Value.(*hujson.Object)
		if len(create.Members) > had {
			layoutAdded(create, " ")
		}
		return v.Pack(), nil
	}
	if err := v.Patch([]byte(`[{"op": "add", "path": "/create", "value": {"saveIn": ` + string(value) + `}}]`)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	root := v.Value.(*hujson.Object)
	layoutAdded(root, "\n  ")
	inner := root.Members[len(root.Members)-1].Value.Value.(*hujson.Object)
	inner.Members[0].Value.BeforeExtra = hujson.Extra(" ")
	return v.Pack(), nil
}

// twice reports whether obj has more than one member named name.
func twice(obj *hujson.Object, name string) bool {
	n := 0
	for _, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			n++
		}
	}
	return n > 1
}

// layoutAdded lays out the member just added at the end of obj as the
// one before it is laid out (its indentation; a space after the comma of
// an object on one line), or with indent when it is the only one, and puts
// a space after its colon.
func layoutAdded(obj *hujson.Object, indent string) {
	n := len(obj.Members)
	added := &obj.Members[n-1]
	added.Value.BeforeExtra = hujson.Extra(" ")
	if n > 1 {
		before := obj.Members[n-2].Name.BeforeExtra
		if n == 2 && !bytes.Contains(before, []byte("\n")) {
			// The first member follows the brace; the next a comma.
			before = hujson.Extra(" ")
		}
		added.Name.BeforeExtra = slices.Clone(before)
		return
	}
	added.Name.BeforeExtra = hujson.Extra(indent)
	if strings.Contains(indent, "\n") && len(bytes.TrimSpace(obj.AfterExtra)) == 0 {
		obj.AfterExtra = hujson.Extra("\n")
	}
}
