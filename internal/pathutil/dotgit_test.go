package pathutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// dotGitCases are the names of git's own tests of is_ntfs_dotgit and
// is_hfs_dotgit (fsck's dotgit cases, the short names and streams its
// submodule tests use, .gitmodules' cases made .git's), and more.
var dotGitCases = []struct {
	name string
	want bool
}{
	{".git", true},
	{".GIT", true},
	{".Git", true},
	{".gIt", true},
	{".gI\u200cT", true}, // fsck: dotgit-unicode
	{"git~1", true},
	{"GIT~1", true},
	{".git.", true},
	{`.\.GIT\foobar`, true}, // fsck: dot-backslash-case
	{`.git\foobar`, true},   // fsck: dotgit-case-backslash
	{`x\.Git`, true},        // a later part
	{".git::$INDEX_ALLOCATION", true},
	{".git:stream", true},
	{".GIT:$DATA", true},
	{"git~1::$INDEX_ALLOCATION", true},
	{".git ", true},
	{".git  ", true},
	{".git. ", true},
	{".git ..", true},
	{".git . .", true},
	{".git. .:x y", true},
	{"GIT~1 ", true},
	{"git~1.", true},
	{"GIT~2", true}, // .git's short name when GIT~1 was taken first
	{"git~4", true},
	{"GIT~12", true},
	{"GI7EBA~1", true}, // the hashed short name form
	{"gi250a~9", true},
	{"\u200c.git", true},
	{".g\u200cit", true},
	{".gi\u200dt", true},
	{".git\u200e", true},
	{".g\u200fi\u202at\u202b", true},
	{".\u202c\u202d\u202egit", true},
	{".\u206ag\u206bi\u206ct\u206d\u206e\u206f", true},
	{"\ufeff.GIT", true},
	{".g\u00adit", true},     // soft hyphen: default ignorable
	{".git\U000e0001", true}, // a tag character
	{".g\u0131t", true},      // dotless ı, whose capital is I
	{".G\u0130T", true},      // dotted İ, whose small letter is i
	{".git\xff", true},       // git reads the name no further
	{".git\uffff", true},
	{".GIT\u200c.", true},
	{"", false},
	{".", false},
	{"..", false},
	{"git", false},
	{".gi", false},
	{"gitmodules", false},
	{".gitmodules", false},
	{".gitignore", false},
	{".gitattributes", false},
	{".github", false},
	{".git-blame-ignore-revs", false},
	{".git x", false},
	{".git .x", false},
	{".git~1", false},
	{"git~", false},
	{"git~a", false},
	{"git~1x", false},
	{"git~1 x", false},
	{"git", false},
	{"GI7EB~10", false}, // five hex digits would be GI7EB1~1
	{"gi7eb~1", false},
	{"xgit~1", false},
	{" .git", false},
	{"git.", false},
	{".\u0147it", false}, // Ň: fsck allows it (its low byte is G)
	{".g\xffit", false},
	{".gi\uffffT", false},
	{".\u200b", false},
	{"\u200b", false},
	{".g\u200bi\u200bx", false},
	{"dot.git", false},
	{"repo.git", false},
}

func TestIsDotGit(t *testing.T) {
	for _, tt := range dotGitCases {
		if got := IsDotGit(tt.name); got != tt.want {
			t.Errorf("IsDotGit(%+q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestIsDotGitGitCases checks the cases against the reference readings of
// git's rules below: each name git takes for .git is caught.
func TestIsDotGitGitCases(t *testing.T) {
	for _, tt := range dotGitCases {
		if (gitNTFS(tt.name) || gitHFS(tt.name)) && !IsDotGit(tt.name) {
			t.Errorf("git takes %+q for .git, IsDotGit does not", tt.name)
		}
	}
}

// TestFoldsTo lists every code point taken for the letters of .git and
// GIT~1 but the ASCII letters themselves: the dotless ı and the dotted İ
// for i, nothing for g and t.
func TestFoldsTo(t *testing.T) {
	want := map[byte]string{'g': "Gg", 'i': "Iiİı", 't': "Tt"}
	for _, c := range []byte("git") {
		var got []rune
		for r := rune(0); r <= utf8.MaxRune; r++ {
			if foldsTo(r, c) {
				got = append(got, r)
			}
		}
		if string(got) != want[c] {
			t.Errorf("foldsTo(r, %q) for r in %+q, want %+q", c, string(got), want[c])
		}
	}
}

// TestIgnorableGit checks that every code point git's is_hfs_dotgit skips
// is ignorable.
func TestIgnorableGit(t *testing.T) {
	for _, g := range [][2]rune{{0x200c, 0x200f}, {0x202a, 0x202e}, {0x206a, 0x206f}, {0xfeff, 0xfeff}} {
		for r := g[0]; r <= g[1]; r++ {
			if !Ignorable(r) {
				t.Errorf("Ignorable(%U) = false, git skips it", r)
			}
		}
	}
	for _, r := range []rune{'a', '.', ' ', 0x200a, 0x2010, 0x2029, 0x2030, 0xfefe, 0xff00, 0x10ffff} {
		if Ignorable(r) {
			t.Errorf("Ignorable(%U) = true", r)
		}
	}
	for i := 1; i < len(ignorables); i++ {
		if ignorables[i][0] <= ignorables[i-1][1] || ignorables[i][0] > ignorables[i][1] {
			t.Errorf("ignorables[%d] = %U..%U is out of order", i, ignorables[i][0], ignorables[i][1])
		}
	}
}

// FuzzIsDotGit checks IsDotGit against git's rules read literally (gitNTFS,
// gitHFS) and a case-insensitive comparison: whatever they take for .git,
// IsDotGit does. Every variant of .git made from the input (each letter's
// case, ignorable code points between them, trailing dots and spaces, a
// stream) is caught, and no .git followed by a letter, digit, - or _
// (.gitignore, .github) is.
func FuzzIsDotGit(f *testing.F) {
	for _, tt := range dotGitCases {
		f.Add(tt.name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if strings.ContainsAny(name, "/\x00") {
			return
		}
		got := IsDotGit(name)
		if gitNTFS(name) && !got {
			t.Fatalf("IsDotGit(%+q) = false; git's NTFS rule takes it for .git", name)
		}
		if gitHFS(name) && !got {
			t.Fatalf("IsDotGit(%+q) = false; git's HFS+ rule takes it for .git", name)
		}
		if strings.EqualFold(name, ".git") && !got {
			t.Fatalf("IsDotGit(%+q) = false; it is .git but for case", name)
		}
		if v := dotGitVariant(name); !IsDotGit(v) {
			t.Fatalf("IsDotGit(%+q) = false, a variant of .git", v)
		}
		if name != "" && !strings.Contains(name, `\`) {
			if c := name[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
				if IsDotGit(".git" + name) {
					t.Fatalf("IsDotGit(%+q) = true", ".git"+name)
				}
			}
		}
	})
}

// dotGitVariant makes, from the bytes of seed, a name a file system may
// take for .git.
func dotGitVariant(seed string) string {
	var b strings.Builder
	next := func() byte {
		if seed == "" {
			return 0
		}
		c := seed[0]
		seed = seed[1:]
		return c
	}
	ign := []rune{0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x206a, 0x206f, 0xfeff, 0x00ad, 0x200b}
	letters := ".git"
	if next()%4 == 0 {
		letters = "git~1"
	}
	for i := 0; i < len(letters); i++ {
		c := next()
		if c&1 != 0 {
			b.WriteRune(ign[int(c>>1)%len(ign)])
		}
		l := letters[i]
		if c&0x80 != 0 && l >= 'a' && l <= 'z' {
			l -= 'a' - 'A'
		}
		b.WriteByte(l)
	}
	for n := next() % 4; n > 0; n-- {
		b.WriteByte(". "[next()%2])
	}
	if next()%3 == 0 {
		b.WriteString(":" + strings.ReplaceAll(seed, "/", ""))
	}
	return b.String()
}

// gitNTFS reads git's is_ntfs_dotgit rule: .git or git~1 in any case,
// then dots and spaces only, up to the end, a backslash or a colon.
func gitNTFS(name string) bool {
	low := func(c byte) byte {
		if c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && low(name[1]) == 'g' && low(name[2]) == 'i' && low(name[3]) == 't':
		rest = name[4:]
	case len(name) >= 5 && low(name[0]) == 'g' && low(name[1]) == 'i' && low(name[2]) == 't' && name[3] == '~' && name[4] == '1':
		rest = name[5:]
	default:
		return false
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '\\' || c == '/' || c == ':':
			return true
		case c != '.' && c != ' ':
			return false
		}
	}
	return true
}

// gitHFS reads git's is_hfs_dotgit rule: the code points U+200C..U+200F,
// U+202A..U+202E, U+206A..U+206F and U+FEFF skipped, a dot and g, i, t in
// either case (ASCII only), then the end; what is not UTF-8 (U+FFFE and
// U+FFFF included) reads as the end.
func gitHFS(name string) bool {
	next := func() rune {
		for {
			if name == "" {
				return 0
			}
			r, n := utf8.DecodeRuneInString(name)
			if r == utf8.RuneError && n == 1 || r == 0xfffe || r == 0xffff {
				name = ""
				return 0
			}
			name = name[n:]
			switch {
			case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
				continue
			}
			return r
		}
	}
	if next() != '.' {
		return false
	}
	for _, want := range "git" {
		c := next()
		if c > 127 {
			return false
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want {
			return false
		}
	}
	c := next()
	return c == 0 || c == '/'
}
