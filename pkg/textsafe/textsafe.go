// Package textsafe makes text written by a tenant (check and metric names, messages, log
// samples: anything a TestRun's script, target or runner put into its status) safe to print
// to a terminal or a CI log: no control character reaches the reader's terminal, so no escape
// sequence clears the screen, rewrites a line (\r), hides text, plants a hyperlink (OSC 8),
// sets the window title or reorders what is shown (bidirectional overrides such as U+202E).
// Each such character is shown escaped (\x1b, \r, \u202e) rather than dropped, so the reader
// sees that something was there.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line is s for one line of a table or a progress line: tabs and newlines become spaces (they
// would break the columns), every other control character is escaped.
func Line(s string) string { return clean(s, false) }

// Text is s for a block of text that may span lines (an error, a JUnit failure's body):
// newlines and tabs stay, every other control character is escaped.
func Text(s string) string { return clean(s, true) }

func clean(s string, multiline bool) string {
	if !needsCleaning(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError) // invalid UTF-8: a terminal may read it as C1
		case r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029':
			if multiline && r != '\u2028' && r != '\u2029' {
				b.WriteRune(r)
			} else if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f, isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// needsCleaning: the common case, plain printable text, is returned as is.
func needsCleaning(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			return true
		}
	}
	return false
}

// isBidi: the Unicode controls that reorder or hide text (embeddings, overrides, isolates,
// marks), used to make text display differently from what it is ("Trojan Source").
func isBidi(r rune) bool {
	switch {
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	case r == '\u200e', r == '\u200f', r == '\u061c':
		return true
	}
	return false
}

// Short is s as one line (Line) cut to at most max bytes (Cut): the form every tenant-written
// string takes in a status field or an event.
func Short(s string, max int) string { return Cut(Line(s), max) }

// Cut returns s cut to at most max bytes, on a character boundary, ending in "…" when cut.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	end := max - len(mark)
	if end < 0 {
		end = 0
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	if end+len(mark) > max {
		return s[:end]
	}
	return s[:end] + mark
}
