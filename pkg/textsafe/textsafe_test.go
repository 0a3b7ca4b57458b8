package textsafe

import (
	"strings"
	"testing"
)

func TestLineAndText(t *testing.T) {
	for _, c := range []struct {
		name, in, line, text string
	}{
		{"plain", "checkout ok", "checkout ok", "checkout ok"},
		{"unicode stays", "größe ✓ 日本", "größe ✓ 日本", "größe ✓ 日本"},
		{"clear screen", "\x1b[2Jpwned", `\x1b[2Jpwned`, `\x1b[2Jpwned`},
		{"colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
			`\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`, `\x1b]8;;https://evil.example\x1b\click\x1b]8;;\x1b\`},
		{"OSC title with BEL", "\x1b]0;title\x07", `\x1b]0;title\x07`, `\x1b]0;title\x07`},
		{"carriage return overwrite", "FAILED\rPASSED", `FAILED\rPASSED`, `FAILED\rPASSED`},
		{"bidi override", "check \u202eKO\u202c", `check \u202eKO\u202c`, `check \u202eKO\u202c`},
		{"bidi isolate", "a\u2066b\u2069", `a\u2066b\u2069`, `a\u2066b\u2069`},
		{"C1 CSI", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
		{"DEL and NUL", "a\x7fb\x00c", `a\x7fb\x00c`, `a\x7fb\x00c`},
		{"backspace", "ok\b\bKO", `ok\x08\x08KO`, `ok\x08\x08KO`},
		{"newline and tab", "line 1\nline\t2", "line 1 line 2", "line 1\nline\t2"},
		{"line separator", "a\u2028b", "a b", "a\nb"},
		{"invalid UTF-8", "a\xffb", "a\ufffdb", "a\ufffdb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
			if got := Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
			for _, out := range []string{Line(c.in), Text(c.in)} {
				if strings.ContainsAny(out, "\x1b\r\x07\x00\x7f\u009b\u202e\u2066") {
					t.Errorf("%q still holds a control character", out)
				}
			}
		})
	}
}

// TestShort: the form of a tenant's string in a status field or an event: one printable line,
// at most max bytes on a character boundary, "…" marking a cut.
func TestShort(t *testing.T) {
	for _, c := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "runner 3 exited", 64, "runner 3 exited"},
		{"escapes first, then cuts", "\x1b[2J" + strings.Repeat("x", 20), 12, `\x1b[2Jxx…`},
		{"newlines become spaces", "panic: boom\n\tgoroutine 1", 64, "panic: boom  goroutine 1"},
		{"invalid UTF-8 replaced", "ok\xff\xfe", 64, "ok\ufffd\ufffd"},
		{"cut on a character boundary", "日本語", 7, "日…"},
		{"no room for the mark", "日本語", 2, ""},
		{"exactly max", "abcd", 4, "abcd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Short(c.in, c.max)
			if got != c.want || len(got) > c.max {
				t.Errorf("Short(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
			}
			if again := Short(got, c.max); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}
