package mcpgate_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate"
)

// checkedSkill is a valid rest skill with one tool.
func checkedSkill() *mcpgate.Skill {
	return &mcpgate.Skill{
		Name: "s", Kind: mcpgate.SkillREST, BaseURL: "https://api.example.com", AutoApprove: true,
		Tools: []*mcpgate.Tool{{
			Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`),
			Request: &mcpgate.Request{Method: "GET", Path: "/x"},
		}},
	}
}

func TestSkillCheck(t *testing.T) {
	t.Parallel()
	if p := checkedSkill().Check(); len(p) != 0 {
		t.Fatalf("a valid skill: %v", p)
	}
	s := checkedSkill()
	s.Prefix = "a b"
	s.Headers = map[string]string{"Authorization": "literal"}
	s.Tools[0].Request.Method = "fetch"
	s.Tools = append(s.Tools, s.Tools[0])
	want := mcpgate.Problems{
		{Field: "prefix", Msg: `"a b" may only hold letters, digits, '_', '.' or '-'`},
		{Field: "headers.Authorization", Msg: "write the secret as ${env:NAME}; it is never stored in plain text"},
		{Field: "tools[0].request.method", Msg: `"FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`},
		{Field: "tools[1].request.method", Msg: `"FETCH" is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`},
		{Field: "tools[1].name", Msg: `tool "t" is declared twice in this skill (first as tools[0])`},
	}
	got := s.Check()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("problems:\n%v\nwant\n%v", got, want)
	}
	if mcpgate.ErrorCode(got) != mcpgate.EINVALID || mcpgate.ErrorMessage(got) != got.Error() {
		t.Errorf("code %q, message %q: want EINVALID with every problem", mcpgate.ErrorCode(got), mcpgate.ErrorMessage(got))
	}
}

func TestSkillUnsetSecrets(t *testing.T) {
	t.Parallel()
	s := checkedSkill()
	s.Headers = map[string]string{"Authorization": "Bearer ${env:A}", "X-B": "${env:B}"}
	s.Tools[0].Request.Query = map[string]string{"key": "${env:C}"}
	lookup := func(name string) (string, bool) { return "v", name == "B" }
	want := mcpgate.Problems{
		{Field: "headers.Authorization", Msg: "environment variable A is not set"},
		{Field: "tools[0].request.query.key", Msg: "environment variable C is not set"},
	}
	if got := s.UnsetSecrets(lookup); !reflect.DeepEqual(want, got) {
		t.Errorf("unset:\n%v\nwant\n%v", got, want)
	}
}

func TestJoinField(t *testing.T) {
	t.Parallel()
	for _, c := range [][3]string{{"", "name", "name"}, {"tools[0]", "", "tools[0]"}, {"tools", "[1]", "tools[1]"}, {"tools[0]", "request.path", "tools[0].request.path"}} {
		if got := mcpgate.JoinField(c[0], c[1]); got != c[2] {
			t.Errorf("JoinField(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestSkillCheckApprovalMode: approval is reviewers or caller, and caller
// needs some call that waits for approval.
func TestSkillCheckApprovalMode(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mode        string
		autoApprove bool
		toolMode    string
		want        string
	}{
		"reviewers":             {mode: mcpgate.ApprovalReviewers, autoApprove: false},
		"caller, skill gated":   {mode: mcpgate.ApprovalCaller, autoApprove: false},
		"caller, tool gated":    {mode: mcpgate.ApprovalCaller, autoApprove: true, toolMode: mcpgate.ApprovalRequired},
		"caller, nothing gated": {mode: mcpgate.ApprovalCaller, autoApprove: true, want: "no tool of this skill needs one"},
		"unknown":               {mode: "owner", autoApprove: false, want: `"owner" is not reviewers or caller`},
	} {
		s := checkedSkill()
		s.Approval, s.AutoApprove, s.Tools[0].Approval = tc.mode, tc.autoApprove, tc.toolMode
		got := s.Check()
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: %v", name, got)
		case tc.want != "" && (len(got) != 1 || got[0].Field != "approval" || !strings.Contains(got[0].Msg, tc.want)):
			t.Errorf("%s: %v, want approval: %s", name, got, tc.want)
		}
	}
}
