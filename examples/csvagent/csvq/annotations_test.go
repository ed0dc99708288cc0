package csvq

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolAnnotationsTellTheTruth checks csv_query's annotations against
// what its queries do: every kind of query, run twice, leaves the table as
// it was (read-only, so destroying nothing) and answers the same
// (idempotent); the table is in memory, so nothing outside is reached.
func TestToolAnnotationsTellTheTruth(t *testing.T) {
	var h struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
		Idempotent  *bool `json:"idempotentHint"`
		OpenWorld   *bool `json:"openWorldHint"`
	}
	if err := json.Unmarshal([]byte(ToolAnnotations), &h); err != nil {
		t.Fatal(err)
	}
	if h.ReadOnly == nil || !*h.ReadOnly || h.Destructive == nil || *h.Destructive ||
		h.Idempotent == nil || !*h.Idempotent || h.OpenWorld == nil || *h.OpenWorld {
		t.Errorf("ToolAnnotations = %s, want read-only, not destructive, idempotent and closed-world, all stated", ToolAnnotations)
	}
	table := mustTable(t)
	for _, q := range []*Query{
		{Op: OpCount}, {Op: "sum", Column: "amount", By: "region"}, {Op: "top", Column: "amount", N: 2},
		{Op: "rows", N: 3, Where: []Cond{{Column: "region", Op: "=", Value: "EU"}}}, {Op: OpColumns},
	} {
		first, err := table.Run(q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		second, err := table.Run(q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("%+v answered differently the second time (-first +second):\n%s", q, diff)
		}
	}
	if diff := cmp.Diff(mustTable(t), table); diff != "" {
		t.Errorf("queries changed the table (-before +after):\n%s", diff)
	}
}
