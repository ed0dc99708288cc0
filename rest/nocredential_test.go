package rest

import (
	"testing"

	"github.com/mcpgate/mcpgate/internal/deptest"
)

// TestNoCredential keeps credentials at the edge: a call reaches this
// package with its Caller, never with the Credential it was made with.
func TestNoCredential(t *testing.T) {
	deptest.CheckNames(t, "Credential")
}
