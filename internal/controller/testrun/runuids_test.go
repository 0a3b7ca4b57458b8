package testrun

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestRunUIDsFindWhatAGoneRunLeft: the UID of a run found gone, or made again under its name,
// is the one read before; a name never read, or already taken, has none.
func TestRunUIDsFindWhatAGoneRunLeft(t *testing.T) {
	name := types.NamespacedName{Namespace: "tenant", Name: "soak"}
	other := types.NamespacedName{Namespace: "other", Name: "soak"}
	u := newRunUIDs()
	if got := u.remember(name, "a"); got != "" {
		t.Errorf("first read: replaced %q, want none", got)
	}
	if got := u.remember(name, "a"); got != "" {
		t.Errorf("second read of the same run: replaced %q, want none", got)
	}
	if got := u.remember(other, "c"); got != "" {
		t.Errorf("another namespace's run of that name: replaced %q, want none", got)
	}
	if got := u.remember(name, "b"); got != "a" {
		t.Errorf("made again under its name: replaced %q, want a", got)
	}
	if uid, ok := u.take(name); !ok || uid != "b" {
		t.Errorf("found gone: took %q %v, want b", uid, ok)
	}
	if uid, ok := u.take(name); ok {
		t.Errorf("taken twice: got %q", uid)
	}
	if uid, ok := u.take(other); !ok || uid != "c" {
		t.Errorf("the other namespace's: took %q %v, want c", uid, ok)
	}
}
