package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// The native block is JSON; front matter is YAML and codex's files TOML.
// These convert values between them, keeping the order of object keys
// (opencode reads the order of permission rules).

// object builds a JSON object in the order keys are added.
type object struct {
	buf bytes.Buffer
	n   int
}

func (o *object) add(key string, value json.RawMessage) {
	if o.n == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	o.buf.Write(value)
	o.n++
}

// raw returns the object, nil when it has no key.
func (o *object) raw() json.RawMessage {
	if o.n == 0 {
		return nil
	}
	return append(json.RawMessage(nil), append(o.buf.Bytes(), '}')...)
}

// nodeJSON converts a YAML value to JSON, keeping the order of mapping
// keys.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	switch n.Tag {
	case "", "!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!timestamp":
	default:
		return nil, fmt.Errorf("line %d: the YAML tag %s has no JSON form", n.Line, n.Tag)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nodeJSON(n.Alias)
	case yaml.MappingNode:
		var o object
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a string", k.Line)
			}
			v, err := nodeJSON(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			o.add(k.Value, v)
		}
		if o.n == 0 {
			return json.RawMessage("{}"), nil
		}
		return o.raw(), nil
	case yaml.SequenceNode:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			v, err := nodeJSON(c)
			if err != nil {
				return nil, err
			}
			b.Write(v)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			return nil, fmt.Errorf("line %d: %v has no JSON form", n.Line, f)
		}
		return json.Marshal(v)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML value", n.Line)
}

// jsonNode converts a JSON value to YAML, keeping the order of object keys.
func jsonNode(raw json.RawMessage) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after a JSON value")
	}
	return n, nil
}

func decodeNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := &yaml.Node{}
				k.SetString(kt.(string))
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, k, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for dec.More() {
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		n := &yaml.Node{}
		n.SetString(t)
		return n, nil
	case json.Number:
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: t.String(), Tag: "!!float"}
		if _, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			n.Tag = "!!int"
		}
		return n, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(t), Tag: "!!bool"}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: "null", Tag: "!!null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// jsonValue decodes a JSON value to Go values for TOML: objects as
// ordered keys (entries), integers as int64.
func jsonValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

// numbers makes the json.Numbers of v int64 or float64.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = numbers(x)
		}
	}
	return v
}

// keys returns the keys of a JSON object in order, with their values.
func keys(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if tok != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var ks []string
	var vs []json.RawMessage
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		ks, vs = append(ks, kt.(string)), append(vs, v)
	}
	return ks, vs, nil
}

// withoutKeys returns the JSON object raw without keys.
func withoutKeys(raw json.RawMessage, drop ...string) json.RawMessage {
	ks, vs, err := keys(raw)
	if err != nil {
		return raw
	}
	var o object
	for i, k := range ks {
		if !slices.Contains(drop, k) {
			o.add(k, vs[i])
		}
	}
	return o.raw()
}
