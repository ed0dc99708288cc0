package csvq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agentkit"
)

// ToolName is the tool the agent declares for structured queries.
const ToolName = "csv_query"

// ToolDescription describes the csv_query tool.
const ToolDescription = "Run a structured query over the agent's CSV table: count, sum, avg, min, max " +
	"(optionally per value of a column with by), top/bottom N rows by a column, the first N rows, or the columns; " +
	"where filters rows by conditions."

// ToolAnnotations are the csv_query tool's MCP annotations: a query only
// reads the agent's table, so it changes and destroys nothing, gives the
// same answer when repeated, and reaches nothing outside the agent.
const ToolAnnotations = `{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`

// ToolSchema is the input schema of the csv_query tool: a Query.
const ToolSchema = `{"type":"object","properties":{` +
	`"op":{"type":"string","enum":["count","sum","avg","min","max","top","bottom","rows","columns"],"description":"What to compute."},` +
	`"column":{"type":"string","description":"The column to aggregate (sum, avg, min, max) or rank by (top, bottom)."},` +
	`"by":{"type":"string","description":"Group by this column: one result per distinct value."},` +
	`"where":{"type":"array","description":"Conditions every row must meet.","items":{"type":"object","properties":{` +
	`"column":{"type":"string"},"op":{"type":"string","enum":["=","!=",">",">=","<","<=","contains"],"default":"="},"value":{"type":"string"}},` +
	`"required":["column","value"],"additionalProperties":false}},` +
	`"n":{"type":"integer","minimum":1,"maximum":100,"description":"How many rows for top, bottom and rows."}},` +
	`"required":["op"],"additionalProperties":false}`

// Agent answers questions about a table as an agentkit handler: plain
// questions through the chat tool, structured ones through csv_query.
type Agent struct {
	Table *Table
}

// MaxAttachmentBytes is the largest CSV attachment the agent reads.
const MaxAttachmentBytes = 10 << 20

// Handle answers one request: it reads the question (following up on
// the channel's previous question when it leaves things out), streams a
// delta, runs the query, and replies with the answer's text and data.
// When the caller attached a CSV file, the question is about that table,
// read through the attachment's signed URL, instead of the agent's own.
func (a *Agent) Handle(ctx context.Context, req *agentkit.Request) error {
	t, err := attachedTable(ctx, req)
	if err != nil {
		return err
	}
	if t != nil {
		a = &Agent{Table: t}
	}
	q, err := a.query(ctx, req)
	if errors.Is(err, ErrNotUnderstood) {
		return req.Reply(ctx, agentkit.Text(a.Table.Help()))
	} else if err != nil {
		return err
	}
	req.Delta(fmt.Sprintf("reading %d rows of %s…", len(a.Table.Rows), a.Table.Name))
	res, err := a.Table.Run(q)
	if err != nil {
		return err
	}
	return req.Reply(ctx, &agentkit.Reply{Text: res.Text, Data: res})
}

// query returns the request's query: csv_query's arguments, or the
// question completed from the channel's history.
func (a *Agent) query(ctx context.Context, req *agentkit.Request) (*Query, error) {
	if req.Tool == ToolName {
		var q Query
		if err := req.Bind(&q); err != nil {
			return nil, err
		}
		return &q, nil
	}
	q, followUp, err := a.Table.Parse(req.Text())
	if err != nil || !followUp {
		return q, err
	}
	hist, err := req.History(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the conversation: %w", err)
	}
	q.Inherit(a.previous(hist))
	return q, nil
}

// previous replays the questions of a channel's history, each completed
// by the one before, and returns the last one understood.
func (a *Agent) previous(hist []*mcpgate.Message) *Query {
	var last *Query
	for _, m := range hist {
		if m.Type != mcpgate.MessageChat {
			continue
		}
		q, followUp, err := a.message(m)
		if err != nil {
			continue
		}
		if followUp {
			q.Inherit(last)
		}
		last = q
	}
	return last
}

// message reads an earlier chat message as a query.
func (a *Agent) message(m *mcpgate.Message) (q *Query, followUp bool, err error) {
	if m.Tool == ToolName {
		q = &Query{}
		return q, false, json.Unmarshal(m.Arguments, q)
	}
	return a.Table.Parse(agentkit.MessageText(m))
}

// attachedTable loads the request's first CSV attachment (by content type
// or name), or returns nil when there is none.
func attachedTable(ctx context.Context, req *agentkit.Request) (*Table, error) {
	for _, at := range req.Attachments() {
		if !strings.HasPrefix(at.MimeType, "text/csv") && !strings.HasSuffix(strings.ToLower(at.Name), ".csv") {
			continue
		}
		if at.Size > MaxAttachmentBytes {
			return nil, fmt.Errorf("the attachment %s is %d bytes; I read CSV files up to %d bytes", at.Name, at.Size, MaxAttachmentBytes)
		}
		rc, err := req.OpenAttachment(ctx, at)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return Load(rc, at.Name)
	}
	return nil, nil
}
