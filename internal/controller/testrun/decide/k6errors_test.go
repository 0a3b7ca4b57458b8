package decide

import (
	"strings"
	"testing"
	"unicode"
)

// TestK6ErrorsArePrintable: k6's error lines come from the pod's log, which the script writes:
// what reaches status.message has no terminal escapes and is short.
func TestK6ErrorsArePrintable(t *testing.T) {
	log := "level=error msg=\"\x1b[2J\x1b[31mpwned\x07 " + strings.Repeat("x", 5000) + "\"\n"
	got := K6Errors(log)
	if strings.ContainsFunc(got, unicode.IsControl) || len(got) > maxErrorText+len("…") || !strings.Contains(got, "pwned") {
		t.Errorf("k6Errors = %q", got)
	}
}
