package runners

import (
	"regexp"
	"strings"
)

// perRunnerGlobal matches a read of k6's __VU or __ITER, not a property of that name
// (obj.__VU) nor a longer identifier (__VU_COUNT).
var perRunnerGlobal = regexp.MustCompile(`(?:^|[^\w$.])(__VU|__ITER)\b`)

// PerRunnerNumbering lists which of __VU and __ITER the script reads, in that order. Each k6
// process numbers its own VUs from 1 (and each VU its iterations from 0), so split over
// runners they repeat; exec.vu.idInTest and exec.scenario.iterationInTest do not. Comments and
// quoted strings do not count; a template literal's ${...} does.
func PerRunnerNumbering(script string) []string {
	found := map[string]bool{}
	for _, m := range perRunnerGlobal.FindAllStringSubmatch(codeOnly(script), -1) {
		found[m[1]] = true
	}
	var out []string
	for _, g := range []string{"__VU", "__ITER"} {
		if found[g] {
			out = append(out, g)
		}
	}
	return out
}

// codeOnly blanks JavaScript comments and the insides of '…' and "…" strings, keeping template
// literals (their ${…} is code). It is a scanner, not a parser: a regular expression literal
// holding a quote or // can confuse it, which costs a missing or extra warning, nothing more.
func codeOnly(src string) string {
	var b strings.Builder
	b.Grow(len(src))
	// depth counts the braces of each open ${…} inside template literals, innermost last.
	var depth []int
	inTemplate := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		next := byte(0)
		if i+1 < len(src) {
			next = src[i+1]
		}
		switch {
		case inTemplate:
			switch {
			case c == '\\':
				b.WriteByte(' ')
				i++
				b.WriteByte(' ')
				continue
			case c == '`':
				inTemplate = false
			case c == '$' && next == '{':
				inTemplate = false
				depth = append(depth, 0)
				b.WriteString("${")
				i++
				continue
			}
			b.WriteByte(c)
		case c == '/' && next == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case c == '/' && next == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			b.WriteByte(' ')
			i += 2 + end + 1
		case c == '\'' || c == '"':
			b.WriteByte(c)
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			b.WriteByte(c)
		case c == '`':
			inTemplate = true
			b.WriteByte(c)
		case c == '{' && len(depth) > 0:
			depth[len(depth)-1]++
			b.WriteByte(c)
		case c == '}' && len(depth) > 0:
			if depth[len(depth)-1] == 0 {
				depth = depth[:len(depth)-1]
				inTemplate = true
			} else {
				depth[len(depth)-1]--
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
