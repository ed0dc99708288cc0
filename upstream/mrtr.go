package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/mcpclient"
)

// maxInputRounds bounds the rounds of input one request may ask for
// before the gateway gives up on it.
const maxInputRounds = 10

// inputRequired is an upstream's InputRequiredResult (the stateless
// revision's multi round-trip requests): what it needs from the client
// before it can answer, and the state to send back with the answers.
type inputRequired struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState"`
}

// inputRequest is one request of an InputRequiredResult: a server→client
// request of the older revisions, without an id.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// call sends a request on s. On a stateless session the request declares
// the capabilities of client, the MCP host it is made for, and an
// InputRequiredResult is bridged: each of its requests goes to client as
// the server→client request it stands for (elicitation/create,
// sampling/createMessage, roots/list), and the request is sent again with
// the answers as inputResponses and the upstream's requestState, until
// the upstream answers. A host that cannot answer fails the request.
func (s *session) call(ctx context.Context, method string, params json.RawMessage, opts *mcpclient.CallOptions, client mcpgate.ClientRequester) (json.RawMessage, error) {
	if !s.cs.Stateless() {
		return s.cs.Call(ctx, method, params, opts)
	}
	opts = withCapabilities(opts, client)
	for round := 0; ; round++ {
		raw, err := s.cs.Call(ctx, method, params, opts)
		if err != nil || !bytes.Contains(raw, []byte(`"input_required"`)) {
			return raw, err
		}
		var ir inputRequired
		if json.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			return raw, nil
		}
		if round == maxInputRounds {
			return nil, fmt.Errorf("%s: the upstream still asks for input after %d rounds", method, maxInputRounds)
		}
		answers, err := answerInputs(ctx, client, ir.InputRequests)
		if err != nil {
			return nil, err
		}
		params = withRaw(params, "inputResponses", mustJSON(answers))
		if len(ir.RequestState) > 0 && string(ir.RequestState) != "null" {
			params = withRaw(params, "requestState", ir.RequestState)
		}
	}
}

// withCapabilities returns opts declaring what the host behind client can
// answer, as hostCaps keeps it; {} without a host.
func withCapabilities(opts *mcpclient.CallOptions, client mcpgate.ClientRequester) *mcpclient.CallOptions {
	o := mcpclient.CallOptions{}
	if opts != nil {
		o = *opts
	}
	caps := clientCaps{}
	if client != nil {
		caps = hostCaps(client.ClientCapabilities())
	}
	o.Capabilities = caps.raw()
	return &o
}

// answerInputs asks the host behind client all of an upstream's input
// requests at once, each under the upstream's key (mcpgate.WithInputKey),
// and returns the answers by those keys. A request the host did not
// declare the capability for, or one it answers with an error, fails them
// all with that error.
func answerInputs(ctx context.Context, client mcpgate.ClientRequester, reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	for _, r := range reqs {
		if err := checkInput(client, r.Method); err != nil {
			return nil, err
		}
	}
	keys := slices.Sorted(maps.Keys(reqs))
	answers, errs := make([]json.RawMessage, len(keys)), make([]error, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() { answers[i], errs[i] = askInput(mcpgate.WithInputKey(ctx, key), client, reqs[key]) })
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	byKey := make(map[string]json.RawMessage, len(keys))
	for i, key := range keys {
		byKey[key] = answers[i]
	}
	return byKey, nil
}

// checkInput refuses an input request the gateway cannot relay to client.
func checkInput(client mcpgate.ClientRequester, method string) error {
	if !serverToClient[method] {
		return &mcpgate.RPCError{Code: -32601, Message: "the upstream asked for input by " + method + ", which the gateway does not relay"}
	}
	if client == nil || !hostCaps(client.ClientCapabilities()).declares(method) {
		return &mcpgate.RPCError{Code: -32603, Message: "the upstream needs " + method + ", which the MCP client did not declare"}
	}
	return nil
}

// askInput sends one input request to the host and returns its answer.
func askInput(ctx context.Context, client mcpgate.ClientRequester, r inputRequest) (json.RawMessage, error) {
	params := r.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	return client.RequestClient(ctx, r.Method, params)
}

// firstError returns the first of errs that is not nil.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
