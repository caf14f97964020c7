package queue

import (
	"fmt"
	"strconv"
	"strings"
)

// Token encodes s as one token of a subject. A subject's tokens are
// separated by '.', and '*', '>' and white space have meanings of their
// own, while ids may hold '.' (a task id "v1.2"): every byte but ASCII
// letters, digits and '-' becomes '_' and its two hex digits in capitals
// ("v1_2E2"), so that two ids never share a token and ParseToken gives s
// back. The empty string is "_".
func Token(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02X", c)
	}
	return b.String()
}

// ParseToken is the string Token encoded as tok.
func ParseToken(tok string) (string, error) {
	if tok == "_" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case plain(c):
			b.WriteByte(c)
			continue
		case c == '_' && i+2 < len(tok) && isUpperHex(tok[i+1]) && isUpperHex(tok[i+2]):
			n, _ := strconv.ParseUint(tok[i+1:i+3], 16, 8)
			if !plain(byte(n)) { // one way to write each byte
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		return "", fmt.Errorf("subject token %q: not one Token makes", tok)
	}
	if tok == "" {
		return "", fmt.Errorf("empty subject token")
	}
	return b.String(), nil
}

// plain reports whether c stands for itself in a token.
func plain(c byte) bool {
	return c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }
