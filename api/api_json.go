package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// maxAPIBody is the largest management API request body.
const maxAPIBody = 1 << 20

// decodeJSON reads the request's JSON body into v. It returns EINVALID
// naming the field for an unknown field or a value of the wrong type,
// EINVALID for a body that is not application/json or not one JSON value,
// and ETOOLARGE beyond 1 MiB.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return mcpgate.Errorf(mcpgate.EINVALID, "the request body must be JSON, sent with Content-Type: application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return jsonError(err)
		}
		return mcpgate.Errorf(mcpgate.EINVALID, "the request body must hold one JSON object and nothing after it")
	}
	return nil
}

// jsonError turns a decoding error into one the caller can act on.
func jsonError(err error) error {
	var tooLarge *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &tooLarge):
		return mcpgate.Errorf(mcpgate.ETOOLARGE, "the request body is larger than %d bytes", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return mcpgate.Errorf(mcpgate.EINVALID, "the request body is empty; send a JSON object")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return mcpgate.Errorf(mcpgate.EINVALID, "the request body must be a JSON object, not %s", typeErr.Value)
		}
		return fieldErrorf(mcpgate.EINVALID, typeErr.Field, "%s must be %s, not %s", typeErr.Field, describeType(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return mcpgate.Errorf(mcpgate.EINVALID, "the request body is not valid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return fieldErrorf(mcpgate.EINVALID, field, "unknown field %s; see %s/openapi.json for the fields", name, apiPrefix)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return mcpgate.Errorf(mcpgate.EINVALID, "the request body ends in the middle of a JSON value")
	}
	// A field's own UnmarshalJSON or UnmarshalText failed (a request body
	// form, a duration): its message says what is wrong.
	return mcpgate.Errorf(mcpgate.EINVALID, "the request body is invalid: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// describeType names a Go type in JSON terms.
func describeType(goType string) string {
	switch {
	case goType == "mcpgate.Duration":
		return `a duration such as "30s"`
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	}
	return fmt.Sprintf("a %s", strings.TrimPrefix(goType, "*"))
}
