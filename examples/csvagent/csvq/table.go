// Package csvq answers questions about a CSV table: it loads the table,
// parses plain-English questions ("average of amount where region = EU",
// "top 3 by amount", "count by region") into queries, runs them, and
// serves them as an agent worker's handler on agentkit.
//
// It is the library behind the csvagent example and the gateway's demo
// mode. It imports the standard library, mcpgate and agentkit only; it
// must not import any other package of the gateway.
package csvq

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Table is a CSV file in memory: a header row naming the columns, then
// the rows, each with one cell per column.
type Table struct {
	Name    string
	Columns []string
	Rows    [][]string
}

// Load reads a CSV table whose first row names the columns.
func Load(r io.Reader, name string) (*Table, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	records, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("read %s: the file is empty; the first row must name the columns", name)
	}
	t := &Table{Name: name, Columns: records[0], Rows: records[1:]}
	for i, c := range t.Columns {
		t.Columns[i] = strings.TrimSpace(strings.TrimPrefix(c, "\ufeff"))
	}
	return t, nil
}

// LoadFile reads a CSV file.
func LoadFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Load(f, filepath.Base(path))
}

// Column returns the index of the column called name, ignoring case and
// taking spaces for underscores; -1 if there is none.
func (t *Table) Column(name string) int {
	key := normalize(name)
	for i, c := range t.Columns {
		if normalize(c) == key {
			return i
		}
	}
	return -1
}

// normalize folds a column name for comparison.
func normalize(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "_")
}

// Numeric reports whether every non-empty cell of column i is a number
// (and at least one is).
func (t *Table) Numeric(i int) bool {
	seen := false
	for _, row := range t.Rows {
		if i >= len(row) || strings.TrimSpace(row[i]) == "" {
			continue
		}
		if _, ok := number(row[i]); !ok {
			return false
		}
		seen = true
	}
	return seen
}

// number parses a cell as a number.
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil
}

// cell returns row's cell in column i, "" when the row is short.
func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}
