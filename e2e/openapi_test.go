package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// specDir holds the real OpenAPI documents the importer is tested on, with
// golden files of the tools each becomes.
const specDir = "../rest/openapi/testdata"

// petstoreEnv sets the secrets the Petstore's security schemes become for
// skills named petstore (imported through the API) and petstore2 (through
// the CLI).
func petstoreEnv() []string {
	return []string{
		"PETSTORE_API_KEY=pk-api", "PETSTORE_PETSTORE_AUTH=tok-api",
		"PETSTORE2_API_KEY=pk-cli", "PETSTORE2_PETSTORE_AUTH=tok-cli",
	}
}

// importReply is the management API's answer to an import.
type importReply struct {
	Skill struct {
		Name   string `json:"name"`
		Prefix string `json:"prefix"`
		Tools  []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"skill"`
	Secrets []string `json:"secrets"`
}

// toolNames returns the imported tools' names, sorted.
func (r *importReply) toolNames() []string {
	var names []string
	for _, tool := range r.Skill.Tools {
		names = append(names, tool.Name)
	}
	return sorted(names)
}

// TestOpenAPIImport imports the Petstore (OpenAPI 3.0) document through
// the management API and calls three of its operations with the TS SDK
// client against a backend that implements them; imports the Discourse
// (OpenAPI 3.1) document into another skill of the same agent, which needs
// a prefix for its tool names; and imports the Petstore again with the CLI.
func TestOpenAPIImport(t *testing.T) {
	t.Parallel() // it mostly waits: see the package comment
	pets := newPetStore()
	backend := httptest.NewServer(pets)
	defer backend.Close()
	// Pages of 100 (the default is 1,000) so that the Discourse import's
	// tools take more than one page, and the cursors are exercised.
	g, api, env := startWithUser(t, petstoreEnv(), "--reload-every", "100ms", "--page-size", "100")
	api.mustDo("POST", "/agents", map[string]any{"id": "pets", "name": "Pets", "mcp_enabled": true}, http.StatusCreated, nil)

	petNames := goldenToolNames(t, "petstore")
	imp := importSpec(t, api, "pets", "petstore", map[string]any{"document": readSpec(t, "petstore.yaml"), "base_url": backend.URL, "allow_private": true})
	if diff := cmp.Diff(petNames, imp.toolNames()); diff != "" {
		t.Errorf("Petstore tools differ from the golden file (-want +got):\n%s", diff)
	}
	if want := []string{"PETSTORE_API_KEY", "PETSTORE_PETSTORE_AUTH"}; !slices.Equal(imp.Secrets, want) {
		t.Errorf("Petstore secrets = %v, want %v", imp.Secrets, want)
	}
	rep, ok := runClient(t, clientPlan{URL: g.URL + "/pets/mcp", Headers: bearer(api.key), Calls: petCalls()})
	if !ok || rep.Error != nil {
		t.Fatalf("client failed: %+v", rep.Error)
	}
	if diff := cmp.Diff(petNames, sorted(reportNames(rep))); diff != "" {
		t.Errorf("tools/list of the TS SDK client (-want +got):\n%s", diff)
	}
	checkPetCalls(t, rep, pets)

	t.Run("Discourse", func(t *testing.T) { testImportDiscourse(t, g, api, petNames) })
	t.Run("CLI", func(t *testing.T) { testImportCLI(t, g, api, env, pets, backend.URL) })
}

// testImportDiscourse imports the Discourse document into a second skill
// of the agent: refused with 409 naming a clashing tool, then accepted
// with a prefix, making as many tools as the golden file lists, all of
// which the agent then serves.
func testImportDiscourse(t *testing.T, g *gateway, api *apiClient, petNames []string) {
	body := map[string]any{"document": readSpec(t, "discourse.yaml")}
	var clash struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	api.mustDo("POST", "/agents/pets/skills/discourse/import", body, http.StatusConflict, &clash)
	if clash.Error.Code != "conflict" || !strings.Contains(clash.Error.Message, `"createUser"`) || !strings.Contains(clash.Error.Message, `skill "petstore"`) {
		t.Errorf("the clash does not name createUser, which both documents have: %+v", clash.Error)
	}
	body["prefix"] = "discourse_"
	discourseNames := goldenToolNames(t, "discourse")
	imp := importSpec(t, api, "pets", "discourse", body)
	if imp.Skill.Prefix != "discourse_" {
		t.Errorf("Discourse skill prefix = %q", imp.Skill.Prefix)
	}
	if got := imp.toolNames(); !slices.Equal(got, discourseNames) {
		t.Errorf("Discourse import made %d tools, the golden file has %d (-want +got):\n%s", len(got), len(discourseNames), cmp.Diff(discourseNames, got))
	}
	want := slices.Clone(petNames)
	for _, n := range discourseNames {
		want = append(want, "discourse_"+n)
	}
	s := openSession(t, g.URL+"/pets/mcp", bearer(api.key))
	got, pages := allToolNames(s)
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("tools/list after the Discourse import (-want +got):\n%s", diff)
	}
	if pages < 2 {
		t.Errorf("%d tools came in %d page; want more than one page of 100", len(got), pages)
	}
}

// readSpec returns one of the test documents as a string.
func readSpec(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(specDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goldenToolNames returns the sorted tool names of a document's golden
// file.
func goldenToolNames(t *testing.T, name string) []string {
	t.Helper()
	var golden struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(readSpec(t, name+".golden.json")), &golden); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range golden.Tools {
		names = append(names, tool.Name)
	}
	return sorted(names)
}

// importSpec imports a document into a new skill through the API.
func importSpec(t *testing.T, api *apiClient, agent, skill string, body map[string]any) *importReply {
	t.Helper()
	var imp importReply
	api.mustDo("POST", "/agents/"+agent+"/skills/"+skill+"/import", body, http.StatusCreated, &imp)
	if imp.Skill.Name != skill {
		t.Errorf("import into %s made skill %q", skill, imp.Skill.Name)
	}
	return &imp
}

// reportNames returns the names of the tools a client listed.
func reportNames(rep *clientReport) []string {
	var names []string
	for _, tool := range rep.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// allToolNames lists every page of a session's tools and returns their
// names and the number of pages.
func allToolNames(s *rpcSession) ([]string, int) {
	s.t.Helper()
	var names []string
	params, pages := `{}`, 0
	for {
		r := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params + `}`)
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(r.Result, &page); err != nil || pages > 100 {
			s.t.Fatalf("tools/list page %d: HTTP %d %.300s", pages+1, r.Status, r.Body)
		}
		pages++
		for _, tool := range page.Tools {
			names = append(names, tool.Name)
		}
		if page.NextCursor == "" {
			return names, pages
		}
		cursor, _ := json.Marshal(page.NextCursor)
		params = `{"cursor":` + string(cursor) + `}`
	}
}

// rex returns the pet the client adds and reads back.
func rex() pet { return pet{ID: 7, Name: "Rex", PhotoURLs: []string{"rex.jpg"}, Status: "available"} }

// petCalls adds two pets, reads one back, finds the available ones and
// asks for a pet that is not there.
func petCalls() []clientCall {
	r := rex()
	return []clientCall{
		{Name: "addPet", Arguments: map[string]any{"id": r.ID, "name": r.Name, "photoUrls": r.PhotoURLs, "status": r.Status}},
		{Name: "addPet", Arguments: map[string]any{"id": 8, "name": "Tom", "photoUrls": []string{}, "status": "sold"}},
		{Name: "getPetById", Arguments: map[string]any{"petId": 7}},
		{Name: "findPetsByStatus", Arguments: map[string]any{"status": "available"}},
		{Name: "getPetById", Arguments: map[string]any{"petId": 999}},
	}
}

// checkPetCalls checks each call's result and what the backend received.
func checkPetCalls(t *testing.T, rep *clientReport, pets *petStore) {
	t.Helper()
	if len(rep.Calls) != 5 {
		t.Fatalf("calls = %d, want 5", len(rep.Calls))
	}
	for _, c := range rep.Calls[:4] {
		if c.Error != nil || c.Result == nil || c.Result.IsError {
			t.Fatalf("%s failed: error %+v result %+v", c.Name, c.Error, c.Result)
		}
	}
	if got, ok := pets.stored(7); !ok || !cmp.Equal(got, rex()) {
		t.Errorf("backend stored %+v, want %+v", got, rex())
	}
	for _, i := range []int{0, 2} {
		if got := mustDecode[pet](t, rep.Calls[i].Result.StructuredContent); !cmp.Equal(got, rex()) {
			t.Errorf("%s structured content = %+v, want %+v", rep.Calls[i].Name, got, rex())
		}
	}
	if got := mustDecode[[]pet](t, rep.Calls[3].Result.Content[0].Text); !cmp.Equal(got, []pet{rex()}) {
		t.Errorf("findPetsByStatus = %+v, want only Rex", got)
	}
	if missing := rep.Calls[4].Result; missing == nil || !missing.IsError || !strings.Contains(missing.Content[0].Text, "404") {
		t.Errorf("getPetById of a missing pet: want an isError result naming 404, got %+v", missing)
	}
	post := petRequest{"POST", "/pet", "", "pk-api", "Bearer tok-api"}
	get := func(path, query string) petRequest { return petRequest{"GET", path, query, "pk-api", "Bearer tok-api"} }
	want := []petRequest{post, post, get("/pet/7", ""), get("/pet/findByStatus", "status=available"), get("/pet/999", "")}
	if diff := cmp.Diff(want, pets.requests()); diff != "" {
		t.Errorf("backend requests (-want +got):\n%s", diff)
	}
}

// mustDecode decodes v, a JSON text or a value decoded from JSON, as T.
func mustDecode[T any](tb testing.TB, v any) T {
	tb.Helper()
	b, ok := v.(string)
	data := []byte(b)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			tb.Fatal(err)
		}
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		tb.Fatalf("decode %s as %T: %v", data, out, err)
	}
	return out
}

// testImportCLI imports the Petstore with `mcpgate import openapi` into
// another agent of the running gateway's data dir, checks what it prints,
// that a clashing import is refused, and that the running gateway serves
// and calls the imported tools.
func testImportCLI(t *testing.T, g *gateway, api *apiClient, env []string, pets *petStore, baseURL string) {
	api.mustDo("POST", "/agents", map[string]any{"id": "pets-cli", "name": "Pets (CLI)", "mcp_enabled": true}, http.StatusCreated, nil)
	petNames := goldenToolNames(t, "petstore")
	args := func(agent string) []string {
		return []string{"import", "openapi", filepath.Join(specDir, "petstore.yaml"), "--agent", agent, "--skill", "petstore2", "--base-url", baseURL, "--allow-private"}
	}
	out := runCLI(t, env, args("pets-cli")...)
	wantLines := []string{fmt.Sprintf("%d tools", len(petNames)), "PETSTORE2_API_KEY, PETSTORE2_PETSTORE_AUTH"}
	for _, n := range petNames {
		wantLines = append(wantLines, "  "+n+"\n")
	}
	for _, want := range wantLines {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if _, stderr, err := tryCLI(env, args("pets")...); err == nil || !strings.Contains(stderr, `skill "petstore" and skill "petstore2"`) {
		t.Errorf("importing tool names the agent has already: err %v, stderr:\n%s", err, stderr)
	}

	s := openSession(t, g.URL+"/pets-cli/mcp", bearer(api.key))
	eventually(t, func() bool { return len(s.toolNames()) == len(petNames) })
	r := s.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getPetById","arguments":{"petId":7}}}`)
	var res toolResult
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || !cmp.Equal(mustDecode[pet](t, res.StructuredContent), rex()) {
		t.Fatalf("getPetById through the CLI's skill: HTTP %d %s", r.Status, r.Body)
	}
	seen := pets.requests()
	if last := seen[len(seen)-1]; last.APIKey != "pk-cli" || last.Auth != "Bearer tok-cli" {
		t.Errorf("the CLI's skill sent api_key %q and Authorization %q", last.APIKey, last.Auth)
	}
}
