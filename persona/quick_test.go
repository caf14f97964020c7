package persona

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/benchtree"
)

// TestQuickParseTakesPlainFiles keeps the fast path in use: ordinary
// persona files must not fall back to the schema validator.
func TestQuickParseTakesPlainFiles(t *testing.T) {
	project, user, base, err := benchtree.Layers(t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"valid": []byte(validPersona)}
	for _, dir := range []string{project, user, base} {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, m := range matches {
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			files[m] = b
		}
	}
	for name, data := range files {
		if _, ok := quickParse(data); !ok {
			t.Errorf("quickParse(%s) declined an ordinary persona file", name)
		}
	}
}

func TestQuickParseDeclines(t *testing.T) {
	tests := map[string]string{
		"null":              `{"id": "x", "tags": null}`,
		"empty string":      `{"id": "x", "description": ""}`,
		"case-folded key":   `{"ID": "x"}`,
		"empty in escapes":  `{"id": "x", "description": "a\\", "intent": ""}`,
		"case-folded input": `{"id": "x", "inputs": {"A": {"ENV": "B"}}}`,
		"duplicate member":  `{"id": "x", "id": "y"}`,
		"unknown field":     `{"id": "x", "colour": "red"}`,
		"unknown input key": `{"id": "x", "inputs": {"A": {"colour": "red"}}}`,
		"bad enum":          `{"id": "x", "claudeMdMode": "append"}`,
		"bad id":            `{"id": "X-"}`,
		"wrong type":        `{"id": "x", "tags": "a"}`,
		"trailing data":     `{"id": "x"}{}`,
	}
	for name, data := range tests {
		if _, ok := quickParse([]byte(data)); ok {
			t.Errorf("quickParse(%s) = ok, want it to leave the file to the schema", name)
		}
	}
}

// plainTokensLoop is the byte-by-byte definition of plainTokens.
func plainTokensLoop(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case 'n':
			return false
		case '"':
			if i+1 < len(data) && data[i+1] == '"' {
				return false
			}
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		}
	}
	return true
}

func FuzzPlainTokens(f *testing.F) {
	for _, s := range []string{validPersona, `{"a": null}`, `{"a": ""}`, `{"a": "\\", "b": ""}`, `{"a": "x\\\"", "n": 1}`,
		`"\\\\"n`, `"abc`, `""`, `"a""b"`, `{"a": "\\"}`, `n`, `"\\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := plainTokens(data), plainTokensLoop(data); got != want {
			t.Fatalf("plainTokens(%q) = %v, the byte loop says %v", data, got, want)
		}
	})
}
