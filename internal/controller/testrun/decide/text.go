package decide

import (
	"strings"

	"fleetbench.dev/fleetbench/pkg/textsafe"
)

// MaxExcerpt bounds the part of a runner's error answer that reaches status.message.
const MaxExcerpt = 200

// Excerpt is a short, printable piece of text a runner or pod wrote: control characters and
// terminal escapes are shown escaped (textsafe.Line), runs of white space (newlines too) become
// one space, and it is cut to n bytes on a character boundary.
func Excerpt(s string, n int) string {
	return textsafe.Cut(strings.Join(strings.Fields(textsafe.Line(s)), " "), n)
}
