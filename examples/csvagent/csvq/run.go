package csvq

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Run answers a query. It fails naming the problem for an unknown column
// or operation, or an aggregate over a column without numbers.
func (t *Table) Run(q *Query) (*Result, error) {
	if q.Op == OpColumns {
		return t.columns(q), nil
	}
	rows, err := t.filter(q.Where)
	if err != nil {
		return nil, err
	}
	res := &Result{Query: q, Matched: len(rows)}
	switch {
	case q.By != "":
		err = t.grouped(q, rows, res)
	case q.Op == OpCount:
		res.Text = fmt.Sprintf("%d rows%s.", len(rows), q.filterText())
	case q.Op == OpTop || q.Op == OpBottom:
		err = t.ranked(q, rows, res)
	case q.Op == OpRows:
		t.listed(q, rows, res)
	default:
		err = t.aggregated(q, rows, res)
	}
	return res, err
}

// columns lists the columns, marking the numeric ones.
func (t *Table) columns(q *Query) *Result {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c
		if t.Numeric(i) {
			names[i] += " (number)"
		}
	}
	text := fmt.Sprintf("%s has %d rows and %d columns: %s.", t.Name, len(t.Rows), len(t.Columns), strings.Join(names, ", "))
	return &Result{Query: q, Matched: len(t.Rows), Columns: t.Columns, Text: text}
}

// index returns a column's index, or an error listing the columns.
func (t *Table) index(name string) (int, error) {
	if i := t.Column(name); i >= 0 {
		return i, nil
	}
	if name == "" {
		return -1, fmt.Errorf("which column? The columns are %s", strings.Join(t.Columns, ", "))
	}
	return -1, fmt.Errorf("there is no column %q; the columns are %s", name, strings.Join(t.Columns, ", "))
}

// filter returns the rows matching every condition.
func (t *Table) filter(where []Cond) ([][]string, error) {
	idx := make([]int, len(where))
	for i, c := range where {
		j, err := t.index(c.Column)
		if err != nil {
			return nil, err
		}
		if !slices.Contains([]string{"=", "!=", ">", ">=", "<", "<=", "contains"}, c.op()) {
			return nil, fmt.Errorf("unknown comparison %q; use = != > >= < <= or contains", c.Op)
		}
		idx[i] = j
	}
	var out [][]string
	for _, row := range t.Rows {
		if matchAll(row, where, idx) {
			out = append(out, row)
		}
	}
	return out, nil
}

// matchAll reports whether row meets every condition.
func matchAll(row []string, where []Cond, idx []int) bool {
	for i, c := range where {
		if !match(cell(row, idx[i]), c) {
			return false
		}
	}
	return true
}

// match compares a cell with a condition's value.
func match(v string, c Cond) bool {
	if c.op() == "contains" {
		return strings.Contains(strings.ToLower(v), strings.ToLower(c.Value))
	}
	var d int
	a, aok := number(v)
	b, bok := number(c.Value)
	if aok && bok {
		d = cmp.Compare(a, b)
	} else {
		d = strings.Compare(strings.ToLower(strings.TrimSpace(v)), strings.ToLower(c.Value))
	}
	switch c.op() {
	case "=":
		return d == 0
	case "!=":
		return d != 0
	case ">":
		return d > 0
	case ">=":
		return d >= 0
	case "<":
		return d < 0
	}
	return d <= 0
}
