package csvq

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpgate/mcpgate"
)

const ordersCSV = `region,product,amount,units
EU,Widget,10,1
EU,Gadget,30,2
US,Widget,20,3
US,Gizmo,50,4
APAC,Widget,5,5
`

// mustTable loads ordersCSV.
func mustTable(tb testing.TB) *Table {
	tb.Helper()
	t, err := Load(strings.NewReader(ordersCSV), "orders.csv")
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func TestAsk(t *testing.T) {
	tests := []struct {
		question string
		want     string
	}{
		{"how many rows?", "5 rows."},
		{"How many rows where region = EU", "2 rows where region = EU."},
		{"average of amount where region = EU", "The average of amount where region = EU is 20 (over 2 rows)."},
		{"what is the total amount for product is Widget", "The sum of amount where product = Widget is 35 (over 3 rows)."},
		{"max units where product = widget and region != US", "The maximum of units where product = widget and region != US is 5 (over 2 rows)."},
		{"lowest amount", "The minimum of amount is 5 (over 5 rows)."},
		{"sum of amount where amount >= 20", "The sum of amount where amount >= 20 is 100 (over 3 rows)."},
		{"top 2 by amount", "Top 2 by amount:\n1. region=US product=Gizmo amount=50 units=4\n2. region=EU product=Gadget amount=30 units=2"},
		{"bottom 1 by amount where region = US", "Bottom 1 by amount where region = US:\n1. region=US product=Widget amount=20 units=3"},
		{"count by region", "Rows per region:\nEU: 2\nUS: 2\nAPAC: 1"},
		{"sum of amount per region", "The sum of amount per region:\nUS: 70\nEU: 40\nAPAC: 5"},
		{"show 1 rows where product contains gad", "1 rows where product contains gad; the first 1:\n1. region=EU product=Gadget amount=30 units=2"},
		{"columns", "orders.csv has 5 rows and 4 columns: region, product, amount (number), units (number)."},
		{"where region = APAC", "1 rows where region = APAC; the first 1:\n1. region=APAC product=Widget amount=5 units=5"},
	}
	tab := mustTable(t)
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			q, _, err := tab.Parse(tt.question)
			if err != nil {
				t.Fatal(err)
			}
			res, err := tab.Run(q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Text); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAskFails(t *testing.T) {
	tab := mustTable(t)
	for _, question := range []string{"help", "what is the meaning of life", "tell me a joke"} {
		if _, _, err := tab.Parse(question); !errors.Is(err, ErrNotUnderstood) {
			t.Errorf("Parse(%q) = %v, want ErrNotUnderstood", question, err)
		}
	}
	if _, _, err := tab.Parse("count where region"); err == nil || !strings.Contains(err.Error(), "column = value") {
		t.Errorf("bad condition: %v", err)
	}
	for _, q := range []*Query{{Op: OpSum, Column: "price"}, {Op: OpCount, Where: []Cond{{Column: "nope", Value: "x"}}}, {Op: "median", Column: "amount"}} {
		if _, err := tab.Run(q); err == nil {
			t.Errorf("Run(%+v) succeeded", q)
		}
	}
}

// chatMessage is an earlier question on a channel.
func chatMessage(text string) *mcpgate.Message {
	args, _ := json.Marshal(map[string]string{"message": text})
	return &mcpgate.Message{Type: mcpgate.MessageChat, Tool: "orders", Arguments: args}
}

func TestFollowUp(t *testing.T) {
	a := &Agent{Table: mustTable(t)}
	reply := &mcpgate.Message{Type: mcpgate.MessageReply, Body: mcpgate.MessageBody{Text: "20"}}
	tool := &mcpgate.Message{Type: mcpgate.MessageChat, Tool: ToolName, Arguments: json.RawMessage(`{"op":"sum","column":"units","where":[{"column":"product","value":"Widget"}]}`)}
	tests := []struct {
		name     string
		history  []*mcpgate.Message
		question string
		want     string
	}{
		{"same filter", []*mcpgate.Message{chatMessage("average of amount where region = EU"), reply}, "and the max?", "The maximum of amount where region = EU is 30 (over 2 rows)."},
		{"new filter", []*mcpgate.Message{chatMessage("sum of amount where region = EU")}, "and where region = US?", "The sum of amount where region = US is 70 (over 2 rows)."},
		{"chained", []*mcpgate.Message{chatMessage("count where region = US"), chatMessage("and the sum of amount")}, "and the min?", "The minimum of amount where region = US is 20 (over 2 rows)."},
		{"after csv_query", []*mcpgate.Message{tool}, "and the average", "The average of units where product = Widget is 3 (over 3 rows)."},
		{"no history", nil, "and how many rows", "5 rows."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, followUp, err := a.Table.Parse(tt.question)
			if err != nil || !followUp {
				t.Fatalf("Parse: %v, follow-up %v", err, followUp)
			}
			q.Inherit(a.previous(tt.history))
			res, err := a.Table.Run(q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Text); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSample(t *testing.T) {
	s := Sample()
	if len(s.Rows) != 1200 || s.Column("amount") < 0 || !s.Numeric(s.Column("amount")) {
		t.Fatalf("sample: %d rows, columns %v", len(s.Rows), s.Columns)
	}
	if diff := cmp.Diff(s.Rows[:3], Sample().Rows[:3]); diff != "" {
		t.Errorf("the sample differs between calls:\n%s", diff)
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(ToolSchema), &schema); err != nil {
		t.Errorf("ToolSchema: %v", err)
	}
}
