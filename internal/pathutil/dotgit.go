package pathutil

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsDotGit reports whether name, one component of a path, names git's own
// directory .git on some file system: a name that a case-insensitive,
// Windows or macOS file system may resolve to the .git beside it. Git
// refuses to check such a name out for the same reason (verify_path,
// is_ntfs_dotgit and is_hfs_dotgit in git's sources); IsDotGit catches
// every name those two catch, and a few more, as it errs on the side of
// a name that never crosses:
//
//   - case: .GIT, .Git, .gIt (and the letters that Unicode's simple case
//     mappings take to g, i or t: the dotless ı, the dotted İ);
//   - NTFS, vfat, exFAT and SMB: trailing dots and spaces (.git., ".git ",
//     ".git . ."), an alternate data stream (.git::$INDEX_ALLOCATION,
//     .git:stream), the 8.3 short names (GIT~1, git~2, and the hashed
//     GI1A2B~1 that Windows gives once GIT~1 to GIT~4 are taken);
//   - HFS+ and casefolded ext4 or f2fs directories: code points the file
//     system ignores, anywhere in the name (.g\u200cit, \ufeff.git): those
//     git ignores (U+200C..U+200F, U+202A..U+202E, U+206A..U+206F,
//     U+FEFF) and every other Default_Ignorable_Code_Point of Unicode,
//     which the casefolding of some Linux kernels ignored too;
//   - a backslash, a directory separator on Windows: each part of the
//     name between backslashes is looked at (.git\x, x\.GIT).
//
// Bytes that are not UTF-8 (and U+FFFE, U+FFFF, which git reads as such)
// end the name where git would stop reading it: ".git\xff" is .git,
// ".g\xffit" is not. ".gitignore", ".github" and ".git-x" are not.
func IsDotGit(name string) bool {
	if !strings.Contains(name, `\`) {
		return dotGitPart(name)
	}
	for part := range strings.SplitSeq(name, `\`) {
		if dotGitPart(part) {
			return true
		}
	}
	return false
}

// dotGitPart is IsDotGit for a name without a backslash.
func dotGitPart(s string) bool {
	// Most names are told apart by their first byte: only a dot, a g or
	// a code point that is not ASCII (an ignorable one may come first)
	// can begin one.
	if s == "" {
		return false
	}
	if b := s[0]; b < utf8.RuneSelf && b != '.' && b != 'g' && b != 'G' {
		return false
	}
	p := hfsReader{s: s}
	r, k := p.next()
	switch {
	case k != runeOK:
		return false
	case r == '.':
		if !p.fold('g') || !p.fold('i') || !p.fold('t') {
			return false
		}
	case foldsTo(r, 'g'):
		if !p.fold('i') {
			return false
		}
		r, k = p.next()
		switch {
		case k == runeOK && foldsTo(r, 't'): // GIT~N
		case k == runeOK && isHex(r): // GIxxxx~N: four hex digits
			for range 3 {
				if r, k = p.next(); k != runeOK || !isHex(r) {
					return false
				}
			}
		default:
			return false
		}
		if r, k = p.next(); k != runeOK || r != '~' {
			return false
		}
		if r, k = p.next(); k != runeOK || r < '0' || r > '9' {
			return false
		}
		for {
			save := p
			if r, k = p.next(); k != runeOK || r < '0' || r > '9' {
				p = save
				break
			}
		}
	default:
		return false
	}
	// What may follow: nothing, dots and spaces (NTFS drops them), then
	// the end or a stream (":"); or what is not UTF-8, where git stops.
	for {
		r, k := p.next()
		switch {
		case k != runeOK || r == ':':
			return true
		case r != '.' && r != ' ':
			return false
		}
	}
}

const (
	runeOK = iota
	runeEnd
	runeBad // not UTF-8, or U+FFFE, U+FFFF
)

// hfsReader reads the code points of a name as HFS+ compares them: the
// ignorable ones are skipped.
type hfsReader struct {
	s string
	i int
}

func (p *hfsReader) next() (rune, int) {
	for p.i < len(p.s) {
		r, n := utf8.DecodeRuneInString(p.s[p.i:])
		if r == utf8.RuneError && n == 1 || r == 0xfffe || r == 0xffff {
			return r, runeBad
		}
		p.i += n
		if !Ignorable(r) {
			return r, runeOK
		}
	}
	return 0, runeEnd
}

// fold reads the next code point and reports whether it is the letter c
// in any case.
func (p *hfsReader) fold(c byte) bool {
	r, k := p.next()
	return k == runeOK && foldsTo(r, c)
}

// foldsTo reports whether r is the ASCII letter c, or a code point that
// Unicode's simple case mappings take to c or to its capital.
func foldsTo(r rune, c byte) bool {
	l := rune(c)
	return r == l || unicode.ToLower(r) == l || unicode.ToUpper(r) == unicode.ToUpper(l)
}

func isHex(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F'
}

// Ignorable reports whether r is a Default_Ignorable_Code_Point of
// Unicode (DerivedCoreProperties.txt), which holds every code point git's
// is_hfs_dotgit skips: a code point that HFS+ and some casefolding file
// systems leave out when they compare names.
func Ignorable(r rune) bool {
	if r < 0xad {
		return false
	}
	for _, g := range ignorables {
		if r < g[0] {
			return false
		}
		if r <= g[1] {
			return true
		}
	}
	return false
}

// ignorables are the ranges of Default_Ignorable_Code_Point, in order.
var ignorables = [][2]rune{
	{0x00ad, 0x00ad}, // soft hyphen
	{0x034f, 0x034f}, // combining grapheme joiner
	{0x061c, 0x061c}, // Arabic letter mark
	{0x115f, 0x1160}, // Hangul fillers
	{0x17b4, 0x17b5}, // Khmer inherent vowels
	{0x180b, 0x180f}, // Mongolian variation selectors and vowel separator
	{0x200b, 0x200f}, // zero width space, non-joiner, joiner; direction marks
	{0x202a, 0x202e}, // directional embeddings and overrides
	{0x2060, 0x206f}, // word joiner, invisible operators, isolates, deprecated formats
	{0x3164, 0x3164}, // Hangul filler
	{0xfe00, 0xfe0f}, // variation selectors
	{0xfeff, 0xfeff}, // zero width no-break space (byte order mark)
	{0xffa0, 0xffa0}, // halfwidth Hangul filler
	{0xfff0, 0xfff8}, // unassigned specials
	{0x1bca0, 0x1bca3},
	{0x1d173, 0x1d17a},
	{0xe0000, 0xe0fff}, // tags, variation selectors supplement
}
