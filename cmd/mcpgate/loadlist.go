package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// listAll lists the agent's tools, following nextCursor to the last page,
// and returns how many there are. A tool listed twice is an error: pages
// must neither repeat nor skip.
func (s *loadSession) listAll(ctx context.Context) (int, error) {
	seen := map[string]bool{}
	cursor := ""
	for {
		page, err := s.listPage(ctx, cursor)
		if err != nil {
			return len(seen), err
		}
		for _, t := range page.Tools {
			if seen[t.Name] {
				return len(seen), fmt.Errorf("tools/list: %q listed twice", t.Name)
			}
			seen[t.Name] = true
		}
		if page.NextCursor == "" {
			return len(seen), nil
		}
		cursor = page.NextCursor
	}
}

// toolsPage is the part of a tools/list result the load test reads.
type toolsPage struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

// listPage fetches one page of tools/list.
func (s *loadSession) listPage(ctx context.Context, cursor string) (*toolsPage, error) {
	s.id++
	params := "{}"
	if cursor != "" {
		params = `{"cursor":` + strconv.Quote(cursor) + `}`
	}
	resp, err := s.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, s.id, params))
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result *toolsPage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	switch err := json.Unmarshal(resp.body, &msg); {
	case err != nil:
		return nil, fmt.Errorf("tools/list: %v", err)
	case msg.Error != nil:
		return nil, fmt.Errorf("tools/list: error %d: %s", msg.Error.Code, msg.Error.Message)
	case msg.Result == nil:
		return nil, fmt.Errorf("tools/list: no result in %s", resp.body)
	}
	return msg.Result, nil
}
