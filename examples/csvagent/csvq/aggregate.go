package csvq

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// opNames are the words answers use for the aggregates.
var opNames = map[string]string{OpCount: "count", OpSum: "sum", OpAvg: "average", OpMin: "minimum", OpMax: "maximum"}

// aggregate computes op over the numbers of column i in rows; ok is false
// when there are none (count needs no numbers).
func aggregate(op string, rows [][]string, i int) (v float64, ok bool) {
	if op == OpCount {
		return float64(len(rows)), true
	}
	n := 0
	for _, row := range rows {
		x, isNum := number(cell(row, i))
		if !isNum {
			continue
		}
		switch {
		case n == 0:
			v = x
		case op == OpMin:
			v = min(v, x)
		case op == OpMax:
			v = max(v, x)
		default:
			v += x
		}
		n++
	}
	if op == OpAvg && n > 0 {
		v /= float64(n)
	}
	return v, n > 0
}

// aggregated answers sum, avg, min or max of a column.
func (t *Table) aggregated(q *Query, rows [][]string, res *Result) error {
	name, ok := opNames[q.Op]
	if !ok {
		return fmt.Errorf("unknown operation %q; use count, sum, avg, min, max, top, bottom, rows or columns", q.Op)
	}
	i, err := t.index(q.Column)
	if err != nil {
		return err
	}
	v, ok := aggregate(q.Op, rows, i)
	if !ok {
		res.Text = fmt.Sprintf("No numbers in %s%s (%d rows match), so there is no %s.", t.Columns[i], q.filterText(), len(rows), name)
		return nil
	}
	v = round(v)
	res.Value = &v
	res.Text = fmt.Sprintf("The %s of %s%s is %s (over %d rows).", name, t.Columns[i], q.filterText(), format(v), len(rows))
	return nil
}

// grouped answers an aggregate per distinct value of the By column.
func (t *Table) grouped(q *Query, rows [][]string, res *Result) error {
	by, err := t.index(q.By)
	if err != nil {
		return err
	}
	col := -1
	if q.Op != OpCount {
		if col, err = t.index(q.Column); err != nil {
			return err
		}
	}
	if _, ok := opNames[q.Op]; !ok {
		return fmt.Errorf("%s cannot be grouped; group count, sum, avg, min or max", q.Op)
	}
	parts := map[string][][]string{}
	for _, row := range rows {
		k := cell(row, by)
		parts[k] = append(parts[k], row)
	}
	for k, part := range parts {
		v, _ := aggregate(q.Op, part, col)
		res.Groups = append(res.Groups, Group{Key: k, Rows: len(part), Value: round(v)})
	}
	slices.SortFunc(res.Groups, func(a, b Group) int { return cmp.Or(cmp.Compare(b.Value, a.Value), cmp.Compare(a.Key, b.Key)) })
	res.Text = groupText(q, t.Columns[by], col, t.Columns, res.Groups)
	return nil
}

// groupText writes one line per group.
func groupText(q *Query, by string, col int, columns []string, groups []Group) string {
	var b strings.Builder
	if col < 0 {
		fmt.Fprintf(&b, "Rows per %s%s:", by, q.filterText())
	} else {
		fmt.Fprintf(&b, "The %s of %s per %s%s:", opNames[q.Op], columns[col], by, q.filterText())
	}
	for _, g := range groups {
		fmt.Fprintf(&b, "\n%s: %s", g.Key, format(g.Value))
	}
	return b.String()
}

// ranked answers the top or bottom N rows by a numeric column.
func (t *Table) ranked(q *Query, rows [][]string, res *Result) error {
	i, err := t.index(q.Column)
	if err != nil {
		return err
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b []string) int {
		x, _ := number(cell(a, i))
		y, _ := number(cell(b, i))
		if q.Op == OpTop {
			return cmp.Compare(y, x)
		}
		return cmp.Compare(x, y)
	})
	n := limit(q.N, 5)
	sorted = sorted[:min(n, len(sorted))]
	res.Rows = t.records(sorted)
	head := fmt.Sprintf("%s %d by %s%s:", strings.ToUpper(q.Op[:1])+q.Op[1:], n, t.Columns[i], q.filterText())
	res.Text = head + t.lines(sorted)
	return nil
}

// listed answers the first N matching rows.
func (t *Table) listed(q *Query, rows [][]string, res *Result) {
	n := limit(q.N, 10)
	first := rows[:min(n, len(rows))]
	res.Rows = t.records(first)
	res.Text = fmt.Sprintf("%d rows%s", len(rows), q.filterText())
	if len(first) > 0 {
		res.Text += fmt.Sprintf("; the first %d:%s", len(first), t.lines(first))
	} else {
		res.Text += "."
	}
}

// limit returns n within 1..100, def when unset.
func limit(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, 100)
}

// records turns rows into column→value maps.
func (t *Table) records(rows [][]string) []map[string]string {
	out := make([]map[string]string, len(rows))
	for r, row := range rows {
		out[r] = map[string]string{}
		for i, c := range t.Columns {
			out[r][c] = cell(row, i)
		}
	}
	return out
}

// lines writes rows as numbered "column=value" lines.
func (t *Table) lines(rows [][]string) string {
	var b strings.Builder
	for r, row := range rows {
		fmt.Fprintf(&b, "\n%d.", r+1)
		for i, c := range t.Columns {
			fmt.Fprintf(&b, " %s=%s", c, cell(row, i))
		}
	}
	return b.String()
}
