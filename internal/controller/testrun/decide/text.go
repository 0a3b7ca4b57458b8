package decide

import (
	"strings"
	"unicode"
)

// MaxExcerpt bounds the part of a runner's error answer that reaches status.message.
const MaxExcerpt = 200

// Excerpt is a short, printable piece of text a runner or pod wrote: control characters (terminal
// escapes, newlines) become spaces, and it is cut to n bytes on a character boundary.
func Excerpt(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	end := n
	for end > 0 && !isRuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
