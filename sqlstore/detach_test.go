package sqlstore

import (
	"context"
	"testing"
)

// TestDetach: a live context that can end is detached, keeping its values;
// an ended one is kept, so that the statement fails with its error; one
// that can never end is returned as it is, without a new context.
func TestDetach(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	d := detach(parent)
	if d.Done() != nil || d.Value(key{}) != "v" {
		t.Errorf("detach of a live context: Done %v, value %v; want nil and v", d.Done(), d.Value(key{}))
	}
	if again := detach(d); again != d {
		t.Error("detach of a detached context made a new one")
	}
	if bg := context.Background(); detach(bg) != bg {
		t.Error("detach of Background made a new context")
	}
	cancel()
	if got := detach(parent); got != parent || got.Err() == nil {
		t.Errorf("detach of an ended context returned %v, want the context itself", got)
	}
}
