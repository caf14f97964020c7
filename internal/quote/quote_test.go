package quote

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestName(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "src/main.go", "src/main.go"},
		{"spaces kept", "my file.txt", "my file.txt"},
		{"letters of any script", "docs/résumé-日本.md", "docs/résumé-日本.md"},
		{"escape and bell", "a\x1b[2Jb\a", `"a\033[2Jb\a"`},
		{"newline", "a\nconflict: b", `"a\nconflict: b"`},
		{"carriage return", "ok\rbad", `"ok\rbad"`},
		{"tab", "a\tb", `"a\tb"`},
		{"double quote", `say "hi"`, `"say \"hi\""`},
		{"backslash", `a\b`, `"a\\b"`},
		{"delete", "a\x7f", `"a\177"`},
		{"invalid UTF-8", "a\xff\xfeb", `"a\377\376b"`},
		{"truncated rune", "a\xe6\x97", `"a\346\227"`},
		{"C1 control", "a\u009bb", `"a\302\233b"`},
		{"bidirectional override", "evil\u202etxt.exe", `"evil\342\200\256txt.exe"`},
		{"zero width joiner", "a\u200db", `"a\342\200\215b"`},
		{"line separator", "a\u2028b", `"a\342\200\250b"`},
		{"empty", "", ""},
		{"leading quote", `"x`, `"\"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Name(tt.in)
			if got != tt.want {
				t.Errorf("Name(%q) = %s, want %s", tt.in, got, tt.want)
			}
			back, err := Unquote(got)
			if err != nil || back != tt.in {
				t.Errorf("Unquote(%s) = %q, %v, want %q", got, back, err, tt.in)
			}
		})
	}
}

func TestUnquoteRejects(t *testing.T) {
	for _, q := range []string{`"`, `"abc`, `"a"b"`, `"a\"`, `"a\q"`, `"a\4xx"`, `"\08"`, `"\0"`} {
		if got, err := Unquote(q); err == nil {
			t.Errorf("Unquote(%s) = %q, want an error", q, got)
		}
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"", "a", "src/x.go", "a\x1b]0;title\a", "\xff", "é", "\u202e", `"\"`, "a\nb", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Name(s)
		back, err := Unquote(q)
		if err != nil || back != s {
			t.Fatalf("Unquote(Name(%q)) = %q, %v", s, back, err)
		}
		if !utf8.ValidString(q) {
			t.Fatalf("Name(%q) = %q is not valid UTF-8", s, q)
		}
		for _, r := range q {
			if r != ' ' && !unicode.IsGraphic(r) {
				t.Fatalf("Name(%q) = %q holds %U, which does not print as itself", s, q, r)
			}
		}
		if q != s && (len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"') {
			t.Fatalf("Name(%q) = %q: a changed name must be in quotes", s, q)
		}
	})
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"open src/x.go: permission denied", "open src/x.go: permission denied"},
		{`a "quoted" \ name`, `a "quoted" \ name`},
		{"open a\x1b[2Jb: no such file", `open a\033[2Jb: no such file`},
		{"line\nforged: line", `line\nforged: line`},
		{"bad \xff byte", `bad \377 byte`},
		{"rtl \u202e", `rtl \342\200\256`},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[31m", "\xff", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Text(s)
		if !utf8.ValidString(q) {
			t.Fatalf("Text(%q) = %q is not valid UTF-8", s, q)
		}
		for _, r := range q {
			if r != ' ' && !unicode.IsGraphic(r) {
				t.Fatalf("Text(%q) = %q holds %U", s, q, r)
			}
		}
	})
}

func TestBlock(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Title\n\n\tindented\n", "# Title\n\n\tindented\n"},
		{"line\x1b[31m red\nnext\r", "line\\033[31m red\nnext\\r"},
		{"bad \xff\n", "bad \\377\n"},
	}
	for _, tt := range tests {
		if got := Block(tt.in); got != tt.want {
			t.Errorf("Block(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestShell(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"workforce", "run", "editor@best"}, "workforce run editor@best"},
		{[]string{"cd", "/a b"}, "cd '/a b'"},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{""}, "''"},
		{[]string{"a;rm -rf ~"}, "'a;rm -rf ~'"},
		{[]string{"--x=1,2:3"}, "--x=1,2:3"},
	}
	for _, tt := range tests {
		if got := Shell(tt.argv...); got != tt.want {
			t.Errorf("Shell(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"", 5, ""},
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"first\nsecond", 72, "first"},
		{"ééééééé", 4, "ééé…"},
	}
	for _, tt := range tests {
		if got := Line(tt.in, tt.n); got != tt.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\nb", "ééééé", "\xff\xfe"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 1000 {
			return
		}
		l := Line(s, n)
		if strings.Contains(l, "\n") || utf8.RuneCountInString(l) > n {
			t.Fatalf("Line(%q, %d) = %q: more than one line or %d characters", s, n, l, n)
		}
		if first, _, _ := strings.Cut(s, "\n"); utf8.RuneCountInString(first) <= n && l != first {
			t.Fatalf("Line(%q, %d) = %q, want the first line %q as it is", s, n, l, first)
		}
	})
}
