package queue

import (
	"strings"
	"testing"
)

func TestToken(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"parser", "parser"},
		{"v1.2", "v1_2E2"},
		{"a_b", "a_5Fb"},
		{"tasks-1a2b3c4d", "tasks-1a2b3c4d"},
		{"", "_"},
		{"a.b.*>", "a_2Eb_2E_2A_3E"},
		{"é", "_C3_A9"},
	} {
		if got := Token(c.in); got != c.want {
			t.Errorf("Token(%q) = %q, want %q", c.in, got, c.want)
		}
		back, err := ParseToken(c.want)
		if err != nil || back != c.in {
			t.Errorf("ParseToken(%q) = %q, %v; want %q", c.want, back, err, c.in)
		}
	}
	for _, bad := range []string{"", "a.b", "a_2", "a_2e", "_41", "a b", "a*", "a>", "__"} {
		if s, err := ParseToken(bad); err == nil {
			t.Errorf("ParseToken(%q) = %q, want an error", bad, s)
		}
	}
}

// FuzzToken checks that every string encodes as one valid subject token
// that decodes back to it, and that a token that decodes is the only
// encoding of what it decodes to (two ids never meet on one subject).
func FuzzToken(f *testing.F) {
	for _, s := range []string{"parser", "v1.2", "a_b", "", "_", "a.b.*>", "é\x00\xff", "_2E", "a b\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := Token(s)
		if tok == "" || strings.ContainsAny(tok, ".*> \t\r\n\x00") {
			t.Fatalf("Token(%q) = %q: not a subject token", s, tok)
		}
		for i := 0; i < len(tok); i++ {
			if !plain(tok[i]) && tok[i] != '_' {
				t.Fatalf("Token(%q) = %q holds %q", s, tok, tok[i])
			}
		}
		back, err := ParseToken(tok)
		if err != nil || back != s {
			t.Fatalf("ParseToken(Token(%q)) = %q, %v", s, back, err)
		}
		if dec, err := ParseToken(s); err == nil && Token(dec) != s {
			t.Fatalf("ParseToken(%q) = %q, whose token is %q", s, dec, Token(dec))
		}
	})
}
