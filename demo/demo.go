// Package demo is what `mcpgate serve --demo` sets up: a small REST API with
// real, deterministic logic (unit and currency conversion, weather from
// built-in data, invoice rows saved as CSV files, deleted only after a
// reviewer's approval), the REST skill that
// serves that API as tools, and the idempotent creation of the demo user,
// agent and API key.
//
// The API runs inside the gateway's own binary, mounted under Prefix, and is
// reached by the gateway's REST backend like any other HTTP API.
//
// It depends on the root package, auth and the standard library; it must not
// import a store implementation, a backend or the transport.
package demo

// Prefix is the path under which the gateway mounts the demo API:
//
//	mux.Handle(demo.Prefix+"/", http.StripPrefix(demo.Prefix, demo.NewAPI(dataDir)))
const Prefix = "/_demo/api"

// The names the demo creates in the store.
const (
	AgentID   = "demo"
	UserName  = "demo"
	SkillName = "demo"
	KeyName   = "demo"
)

// GatedTool is the demo tool whose calls wait for a reviewer's approval,
// so that a newcomer meets the approval gate at once.
const GatedTool = "delete_invoice"
