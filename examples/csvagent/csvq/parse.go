package csvq

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrNotUnderstood is returned by Parse for a question it cannot read;
// Help says what it can.
var ErrNotUnderstood = errors.New("csvq: question not understood")

// The patterns questions are read with.
var (
	reFollowUp = regexp.MustCompile(`(?i)^\s*(and|what about|how about|also|then|same for|now)\b[\s,]*`)
	reWhere    = regexp.MustCompile(`(?i)\s*\b(where|whose|with|if|for)\s+(.+)$`)
	reAnd      = regexp.MustCompile(`(?i)\s+(?:and|&&)\s+`)
	reCond     = regexp.MustCompile(`(?i)^\s*([\w. -]+?)\s*(!=|<>|>=|<=|==|=|>|<|\bis not\b|\bis\b|\bequals\b|\bcontains\b)\s*(.+?)\s*$`)
	reHelp     = regexp.MustCompile(`(?i)^\s*(help|hi|hello|what can you do|how does this work)\b`)
	reColumns  = regexp.MustCompile(`(?i)\b(columns|fields|headers|schema)\b`)
	reRank     = regexp.MustCompile(`(?i)\b(top|bottom)\s*(\d+)?\b.*?\b(?:by|on|of)\s+([\w.-]+)`)
	reBy       = regexp.MustCompile(`(?i)\b(?:by|per|for each|for every)\s+([\w.-]+)`)
	reAgg      = regexp.MustCompile(`(?i)\b(sum|total|average|avg|mean|min|minimum|lowest|smallest|max|maximum|highest|largest|biggest)\b(?:\s+(?:of|the|in|value|values))*\s*([\w.-]+)?`)
	reCount    = regexp.MustCompile(`(?i)\b(how many|count|number of)\b`)
	reRows     = regexp.MustCompile(`(?i)^\s*(show|list|filter|find|get|give|display|rows)\b`)
	reNumber   = regexp.MustCompile(`\b(\d+)\b`)
	reWord     = regexp.MustCompile(`[\w.-]+`)
)

// aggWords maps the words of an aggregate to its operation.
var aggWords = map[string]string{
	"sum": OpSum, "total": OpSum, "average": OpAvg, "avg": OpAvg, "mean": OpAvg,
	"min": OpMin, "minimum": OpMin, "lowest": OpMin, "smallest": OpMin,
	"max": OpMax, "maximum": OpMax, "highest": OpMax, "largest": OpMax, "biggest": OpMax,
}

// Parse reads a question about t. followUp reports that the question
// continues the previous one ("and the max?"): what it leaves out (the
// operation, column, grouping, filter) comes from there, see Inherit. It
// returns ErrNotUnderstood for anything else.
func (t *Table) Parse(question string) (q *Query, followUp bool, err error) {
	s := strings.TrimRight(strings.TrimSpace(question), "?.! ")
	if reHelp.MatchString(s) {
		return nil, false, ErrNotUnderstood
	}
	if loc := reFollowUp.FindStringIndex(s); loc != nil {
		followUp, s = true, s[loc[1]:]
	}
	q = &Query{}
	head, where, err := splitWhere(s)
	if err != nil {
		return nil, false, err
	}
	q.Where = where
	if !t.readHead(head, q) && !followUp && len(where) == 0 {
		return nil, false, ErrNotUnderstood
	}
	if q.Op == "" && !followUp {
		q.Op = OpRows
	}
	return q, followUp || (needsColumn(q.Op) && q.Column == ""), nil
}

// splitWhere cuts the filter off a question. A "for"/"with" phrase that
// is no condition ("for each region") stays in the head.
func splitWhere(s string) (head string, where []Cond, err error) {
	m := reWhere.FindStringSubmatchIndex(s)
	if m == nil {
		return s, nil, nil
	}
	keyword := strings.ToLower(s[m[2]:m[3]])
	for _, part := range reAnd.Split(s[m[4]:], -1) {
		c, ok := parseCond(part)
		if !ok {
			if keyword != "where" && keyword != "whose" {
				return s, nil, nil
			}
			return "", nil, fmt.Errorf("cannot read the condition %q: write it as column = value (or != > >= < <= contains)", part)
		}
		where = append(where, c)
	}
	return s[:m[0]], where, nil
}

// parseCond reads "column op value".
func parseCond(s string) (Cond, bool) {
	m := reCond.FindStringSubmatch(s)
	if m == nil {
		return Cond{}, false
	}
	op := strings.ToLower(m[2])
	switch op {
	case "is", "equals", "==":
		op = "="
	case "is not", "<>":
		op = "!="
	}
	return Cond{Column: strings.TrimSpace(m[1]), Op: op, Value: strings.Trim(m[3], `"'`)}, true
}

// readHead reads the question without its filter into q, reporting
// whether it recognized anything.
func (t *Table) readHead(head string, q *Query) bool {
	switch {
	case reColumns.MatchString(head):
		q.Op = OpColumns
	case reRank.MatchString(head):
		m := reRank.FindStringSubmatch(head)
		q.Op, q.Column = strings.ToLower(m[1]), m[3]
		q.N, _ = strconv.Atoi(m[2])
	case reAgg.MatchString(head):
		m := reAgg.FindStringSubmatch(head)
		q.Op = aggWords[strings.ToLower(m[1])]
		q.Column = t.columnIn(m[2], head)
		q.By = byColumn(head)
	case reCount.MatchString(head):
		q.Op, q.By = OpCount, byColumn(head)
	case reRows.MatchString(head) && byColumn(head) == "":
		q.Op = OpRows
		if m := reNumber.FindStringSubmatch(head); m != nil {
			q.N, _ = strconv.Atoi(m[1])
		}
	default:
		q.By = byColumn(head)
		if q.By != "" {
			q.Op = OpCount
		}
		return q.By != ""
	}
	return true
}

// columnIn returns word if it names a column, else the first column
// named anywhere in head outside a "by" phrase, else "".
func (t *Table) columnIn(word, head string) string {
	if word != "" && t.Column(word) >= 0 {
		return word
	}
	head = reBy.ReplaceAllString(head, "")
	for _, w := range reWord.FindAllString(head, -1) {
		if t.Column(w) >= 0 {
			return w
		}
	}
	return ""
}

// byColumn returns the column of a "by"/"per" phrase, or "".
func byColumn(head string) string {
	if m := reBy.FindStringSubmatch(head); m != nil {
		return m[1]
	}
	return ""
}

// needsColumn reports whether an operation needs a column.
func needsColumn(op string) bool {
	switch op {
	case OpSum, OpAvg, OpMin, OpMax, OpTop, OpBottom:
		return true
	}
	return false
}

// Inherit completes a follow-up question with the previous query: the
// operation, column and grouping when it names none, and the filter when
// it has none.
func (q *Query) Inherit(prev *Query) {
	if prev == nil || prev.Op == OpColumns {
		return
	}
	if q.Op == "" {
		q.Op, q.N = prev.Op, prev.N
	}
	if q.Column == "" && needsColumn(q.Op) {
		q.Column = prev.Column
	}
	if q.By == "" && q.Op != OpTop && q.Op != OpBottom && q.Op != OpRows {
		q.By = prev.By
	}
	if len(q.Where) == 0 {
		q.Where = prev.Where
	}
}

// Help explains what questions t answers.
func (t *Table) Help() string {
	return fmt.Sprintf(`I answer questions about %s (%d rows). Its columns: %s.
Ask for example:
  how many rows
  columns
  average of amount where region = EU
  sum of amount by region
  max units where product = Widget and region != US
  top 3 by amount
  count by product
  show 5 rows where amount > 100
and follow up with "and the max?" or "and where region = US?" to reuse the last question.`,
		t.Name, len(t.Rows), strings.Join(t.Columns, ", "))
}
