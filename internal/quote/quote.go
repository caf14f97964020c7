// Package quote makes strings that the agent controls safe to print: file
// names, branch names, messages. It quotes them as git quotes paths
// (core.quotePath): a name that needs no quoting is printed as it is;
// any other is put in double quotes, with C escapes (\t, \n, \", \\, ...)
// and octal escapes of the bytes that are not printable text.
//
// Unlike git's default, valid UTF-8 that prints as itself (letters,
// marks, numbers, punctuation, symbols and spaces of any script) is kept
// as it is, as git does with core.quotePath=false: what is quoted is what
// could move the cursor, change colours, ring the bell, reorder the text
// (bidirectional overrides), hide characters (format characters such as
// zero-width joiners) or fail to decode. So a quoted name never holds a
// control byte, and a printed name can always be read back with Unquote.
//
// Text escapes a whole message the same way, in place and without quotes,
// for errors and warnings that may carry such a name or git's output.
// Machine-readable output (--json) carries the exact name instead.
package quote

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name returns s as it is when it needs no quoting, and otherwise in double
// quotes with escapes, as described in the package documentation.
func Name(s string) string {
	if !needs(s, true) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	write(&b, s, true, "")
	b.WriteByte('"')
	return b.String()
}

// Text returns the message s with what does not print as itself escaped
// in place (\n, \033, octal bytes), without quotes: for messages that may
// hold a name or output the agent controls, such as an error from the file
// system or from git. It keeps s as it is when nothing needs escaping;
// unlike Name it is not meant to be read back.
func Text(s string) string { return escaped(s, "") }

// Block is Text for text of several lines, such as instruction files
// printed for a person: newlines and tabs are kept, every other character
// that does not print as itself is escaped.
func Block(s string) string { return escaped(s, "\n\t") }

// escaped is Text keeping the ASCII control characters of keep.
func escaped(s, keep string) string {
	if !needs(s, false) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	write(&b, s, false, keep)
	if b.Len() == len(s) {
		return s // only kept characters
	}
	return b.String()
}

// write writes s to b with what does not print as itself escaped, and with
// quoted, the double quote and the backslash too; the ASCII characters of
// keep are written as they are.
func write(b *strings.Builder, s string, quoted bool, keep string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case quoted && (c == '"' || c == '\\'):
				b.WriteByte('\\')
				b.WriteByte(c)
			case control(c) && strings.IndexByte(keep, c) < 0:
				escape(b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if printable(r, n) {
			b.WriteString(s[i : i+n])
		} else {
			for j := 0; j < n; j++ {
				octal(b, s[i+j])
			}
		}
		i += n
	}
}

// needs reports whether s holds something to escape, or with quoted, to
// quote.
func needs(s string, quoted bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if control(c) || quoted && (c == '"' || c == '\\') {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !printable(r, n) {
			return true
		}
		i += n
	}
	return false
}

// control reports whether the ASCII byte c is a control character.
func control(c byte) bool { return c < 0x20 || c == 0x7f }

// printable reports whether the rune r, decoded from n bytes, is valid
// UTF-8 that prints as itself.
func printable(r rune, n int) bool {
	if r == utf8.RuneError && n <= 1 {
		return false
	}
	return unicode.IsGraphic(r)
}

// escape writes the ASCII control character c as a C escape, or in octal.
func escape(b *strings.Builder, c byte) {
	switch c {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\t':
		b.WriteString(`\t`)
	case '\n':
		b.WriteString(`\n`)
	case '\v':
		b.WriteString(`\v`)
	case '\f':
		b.WriteString(`\f`)
	case '\r':
		b.WriteString(`\r`)
	default:
		octal(b, c)
	}
}

func octal(b *strings.Builder, c byte) {
	b.WriteByte('\\')
	b.WriteByte('0' + c>>6)
	b.WriteByte('0' + c>>3&7)
	b.WriteByte('0' + c&7)
}

// ErrSyntax is the error of Unquote for text that Name cannot have made.
var ErrSyntax = errors.New("invalid quoted name")

// Unquote reverses Name: a string not starting with a double quote is
// returned as it is; a quoted one has its escapes decoded.
func Unquote(q string) (string, error) {
	if !strings.HasPrefix(q, `"`) {
		return q, nil
	}
	if len(q) < 2 || q[len(q)-1] != '"' {
		return "", ErrSyntax
	}
	q = q[1 : len(q)-1]
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '"':
			return "", ErrSyntax
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(q) {
			return "", ErrSyntax
		}
		switch q[i] {
		case '"', '\\':
			b.WriteByte(q[i])
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '0', '1', '2', '3':
			if i+2 >= len(q) || !isOctal(q[i+1]) || !isOctal(q[i+2]) {
				return "", ErrSyntax
			}
			b.WriteByte((q[i]-'0')<<6 | (q[i+1]-'0')<<3 | (q[i+2] - '0'))
			i += 2
		default:
			return "", ErrSyntax
		}
	}
	return b.String(), nil
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// Line shortens s to its first line and at most n characters (n >= 1),
// the last of them "…" when it cut: a cell of a table. It escapes nothing
// (Text does).
func Line(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Shell quotes argv for display as a shell command line: an argument of
// letters, digits and -_./=,:@ only as it is, any other in single quotes.
func Shell(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
