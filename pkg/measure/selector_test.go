package measure

import "testing"

// Keys written differently that select the same samples have one canonical form, and it
// parses back to the same selection.
func TestCanonicalSelector(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{`http_req_duration{name:push}`, `http_req_duration{name:push}`},
		{` http_req_duration{ name : "push" }`, `http_req_duration{name:push}`}, // spaces and quotes on purpose
		{`http_req_duration{status:200,name:'push'}`, `http_req_duration{name:push,status:200}`},
		{`http_req_duration{url:http://a/b}`, `http_req_duration{url:http://a/b}`},
		{`http_req_duration{}`, `http_req_duration`},
		{`my_trend`, `my_trend`},
	} {
		key, want := tc.key, tc.want
		got, _, err := CanonicalSelector(key)
		if err != nil || got != want {
			t.Errorf("CanonicalSelector(%q) = %q, %v; want %q", key, got, err, want)
			continue
		}
		if again, _, _ := CanonicalSelector(got); again != got {
			t.Errorf("canonical %q is not a fixed point: %q", got, again)
		}
	}
	if _, _, err := CanonicalSelector("x{name}"); err == nil {
		t.Error("a malformed filter must be an error")
	}
}
