package csvq

import (
	"fmt"
	"math"
	"strings"
)

// The operations of a query.
const (
	OpCount   = "count"   // rows matching; per group with By
	OpSum     = "sum"     // of Column; per group with By
	OpAvg     = "avg"     // of Column; per group with By
	OpMin     = "min"     // of Column; per group with By
	OpMax     = "max"     // of Column; per group with By
	OpTop     = "top"     // the N rows with the largest Column
	OpBottom  = "bottom"  // the N rows with the smallest Column
	OpRows    = "rows"    // the first N matching rows
	OpColumns = "columns" // the table's columns
)

// Cond is one condition of a query's filter: Column Op Value, where Op is
// one of = != > >= < <= contains. Values compare as numbers when both
// sides are numbers, else as text ignoring case.
type Cond struct {
	Column string `json:"column"`
	Op     string `json:"op,omitempty"` // "=" when empty
	Value  string `json:"value"`
}

// String writes the condition as a question would.
func (c Cond) String() string { return c.Column + " " + c.op() + " " + c.Value }

// op returns the condition's operator, "=" by default.
func (c Cond) op() string {
	if c.Op == "" || c.Op == "==" {
		return "="
	}
	return c.Op
}

// Query is a question about the table in structured form; it is also the
// arguments of the csv_query tool.
type Query struct {
	Op     string `json:"op"`
	Column string `json:"column,omitempty"`
	By     string `json:"by,omitempty"`
	Where  []Cond `json:"where,omitempty"`
	N      int    `json:"n,omitempty"`
}

// filterText describes the query's filter: " where a = b and c > 1".
func (q *Query) filterText() string {
	if len(q.Where) == 0 {
		return ""
	}
	parts := make([]string, len(q.Where))
	for i, c := range q.Where {
		parts[i] = c.String()
	}
	return " where " + strings.Join(parts, " and ")
}

// Group is one group of a grouped aggregate.
type Group struct {
	Key   string  `json:"key"`
	Rows  int     `json:"rows"`
	Value float64 `json:"value"`
}

// Result is a query's answer, as text and as structured data.
type Result struct {
	Query   *Query              `json:"query"`
	Matched int                 `json:"matched"`
	Value   *float64            `json:"value,omitempty"`
	Columns []string            `json:"columns,omitempty"`
	Rows    []map[string]string `json:"rows,omitempty"`
	Groups  []Group             `json:"groups,omitempty"`
	Text    string              `json:"-"`
}

// round keeps two decimals.
func round(v float64) float64 { return math.Round(v*100) / 100 }

// format writes a number without needless decimals.
func format(v float64) string { return fmt.Sprint(round(v)) }
