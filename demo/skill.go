package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate"
)

// obj is a JSON object under construction.
type obj = map[string]any

// Skill returns the REST skill "demo" of agent "demo", whose tools call the
// demo API at baseURL, such as "http://127.0.0.1:8094/_demo/api".
func Skill(baseURL string) *mcpgate.Skill {
	return &mcpgate.Skill{
		AgentID:      AgentID,
		Name:         SkillName,
		Kind:         mcpgate.SkillREST,
		BaseURL:      strings.TrimRight(baseURL, "/"),
		AllowPrivate: true,
		AutoApprove:  true,
		Source:       mcpgate.SourceDemo,
		Tools: []*mcpgate.Tool{
			convertUnitsTool(), convertCurrencyTool(), getWeatherTool(), saveInvoiceTool(), listInvoicesTool(), deleteInvoiceTool(),
		},
	}
}

// convertUnitsTool binds POST /convert/units.
func convertUnitsTool() *mcpgate.Tool {
	return &mcpgate.Tool{
		Name:  "convert_units",
		Title: "Convert units",
		Description: fmt.Sprintf("Convert a value between units of the same kind: length (%s), mass (%s), US volume (%s) or temperature (%s).",
			strings.Join(categoryUnits(catLength), ", "), strings.Join(categoryUnits(catMass), ", "),
			strings.Join(categoryUnits(catVolume), ", "), strings.Join(categoryUnits(catTemperature), ", ")),
		InputSchema: mustJSON(obj{
			"type": "object",
			"properties": obj{
				"value": obj{"type": "number", "description": "The value to convert."},
				"from":  obj{"type": "string", "enum": unitNames, "description": "The unit of value."},
				"to":    obj{"type": "string", "enum": unitNames, "description": "The unit to convert to; the same kind as from."},
			},
			"required":             []string{"value", "from", "to"},
			"additionalProperties": false,
		}),
		OutputSchema: mustJSON(objectSchema(obj{
			"value": typed("number"), "from": typed("string"), "to": typed("string"), "result": typed("number"),
			"category": obj{"type": "string", "enum": []string{catLength, catMass, catVolume, catTemperature}},
		})),
		Annotations: readOnly(),
		Request:     &mcpgate.Request{Method: "POST", Path: "/convert/units", Body: &mcpgate.RequestBody{Mode: mcpgate.BodyAll}},
	}
}

// convertCurrencyTool binds GET /convert/currency.
func convertCurrencyTool() *mcpgate.Tool {
	codes := currencyCodes()
	code := func(desc string) obj {
		return obj{"type": "string", "enum": codes, "pattern": "^[A-Z]{3}$", "description": desc}
	}
	return &mcpgate.Tool{
		Name:  "convert_currency",
		Title: "Convert currency",
		Description: "Convert an amount of money between currencies (" + strings.Join(codes, ", ") +
			"). Uses fixed demo exchange rates dated " + RatesDate + ", not live rates.",
		InputSchema: mustJSON(obj{
			"type": "object",
			"properties": obj{
				"amount": obj{"type": "number", "description": "The amount to convert."},
				"from":   code("The ISO 4217 code of the amount's currency."),
				"to":     code("The ISO 4217 code of the currency to convert to."),
			},
			"required":             []string{"amount", "from", "to"},
			"additionalProperties": false,
		}),
		OutputSchema: mustJSON(objectSchema(obj{
			"amount": typed("number"), "from": typed("string"), "to": typed("string"), "rate": typed("number"),
			"result": typed("number"), "rates_date": typed("string"),
		})),
		Annotations: readOnly(),
		Request: &mcpgate.Request{Method: "GET", Path: "/convert/currency",
			Query: map[string]string{"amount": "{amount}", "from": "{from}", "to": "{to}"}},
	}
}

// getWeatherTool binds GET /weather/{city}.
func getWeatherTool() *mcpgate.Tool {
	day := objectSchema(obj{"day": typed("integer"), "high": typed("number"), "low": typed("number"), "conditions": typed("string")})
	return &mcpgate.Tool{
		Name:        "get_weather",
		Title:       "Get the weather",
		Description: "Get the current weather and a 3-day forecast for a city. Built-in demo data: the same answer every time, not a live forecast.",
		InputSchema: mustJSON(obj{
			"type": "object",
			"properties": obj{
				"city":  obj{"type": "string", "enum": citySlugs(), "description": "The city."},
				"units": obj{"type": "string", "enum": []string{"metric", "imperial"}, "default": "metric", "description": "metric (°C, km/h) or imperial (°F, mph)."},
			},
			"required":             []string{"city"},
			"additionalProperties": false,
		}),
		OutputSchema: mustJSON(objectSchema(obj{
			"city": typed("string"), "country": typed("string"), "units": typed("string"),
			"temperature": typed("number"), "feels_like": typed("number"), "temperature_unit": typed("string"),
			"conditions": typed("string"), "humidity": typed("integer"), "wind_speed": typed("number"),
			"wind_unit": typed("string"), "wind_direction": typed("string"), "note": typed("string"),
			"forecast": obj{"type": "array", "items": day},
		})),
		Annotations: readOnly(),
		Request:     &mcpgate.Request{Method: "GET", Path: "/weather/{city}", Query: map[string]string{"units": "{units}"}},
	}
}

// saveInvoiceTool binds POST /invoices/{filename}/csv.
func saveInvoiceTool() *mcpgate.Tool {
	row := obj{
		"type": "object",
		"properties": obj{
			"date":        obj{"type": "string", "pattern": `^\d{4}-\d{2}-\d{2}$`, "description": "The invoice date, YYYY-MM-DD."},
			"vendor":      obj{"type": "string", "minLength": 1, "description": "Who issued the invoice."},
			"description": obj{"type": "string", "description": "What the invoice is for."},
			"amount":      obj{"type": "number", "description": "The amount, in the invoice's currency."},
		},
		"required":             []string{"date", "vendor", "amount"},
		"additionalProperties": false,
	}
	return &mcpgate.Tool{
		Name:        "save_invoice_csv",
		Title:       "Save invoice rows as CSV",
		Description: "Save invoice rows as a CSV file (date, vendor, description, amount) in the gateway's data directory, replacing a file of the same name. Returns the file's path within the data directory, row count and total.",
		InputSchema: mustJSON(obj{
			"type": "object",
			"properties": obj{
				"filename": obj{"type": "string", "pattern": FilenamePattern, "description": "The file's name without .csv: letters, digits, '_' or '-'."},
				"rows":     obj{"type": "array", "items": row, "minItems": 1, "maxItems": maxInvoiceRows},
			},
			"required":             []string{"filename", "rows"},
			"additionalProperties": false,
		}),
		OutputSchema: mustJSON(savedFileSchema()),
		// It writes a file, and overwrites (destroys) one of the same name;
		// the same call twice leaves the same file.
		Annotations: mustJSON(obj{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}),
		Request: &mcpgate.Request{Method: "POST", Path: "/invoices/{filename}/csv",
			Body: &mcpgate.RequestBody{Mode: mcpgate.BodyFields, Fields: []string{"rows"}}},
	}
}

// listInvoicesTool binds GET /invoices.
func listInvoicesTool() *mcpgate.Tool {
	return &mcpgate.Tool{
		Name:        "list_invoices",
		Title:       "List saved invoice files",
		Description: "List the invoice CSV files saved so far, with their row counts and totals.",
		InputSchema: mustJSON(obj{"type": "object", "properties": obj{}, "additionalProperties": false}),
		OutputSchema: mustJSON(objectSchema(obj{
			"invoices": obj{"type": "array", "items": savedFileSchema()},
			"count":    typed("integer"),
		})),
		Annotations: readOnly(),
		Request:     &mcpgate.Request{Method: "GET", Path: "/invoices"},
	}
}

// deleteInvoiceTool binds DELETE /invoices/{filename}. It is the demo's
// gated tool: it destroys data, so each call waits for a reviewer
// (approval: required), which shows a newcomer the approval gate at once.
func deleteInvoiceTool() *mcpgate.Tool {
	return &mcpgate.Tool{
		Name:  GatedTool,
		Title: "Delete a saved invoice file",
		Description: "Delete a saved invoice CSV file by name. Each call needs approval: it waits until the agent's owner " +
			"approves or rejects it in the dashboard (/ui/approvals/), or rejects it after 5 minutes without a decision.",
		InputSchema: mustJSON(obj{
			"type":                 "object",
			"properties":           obj{"filename": obj{"type": "string", "pattern": FilenamePattern, "description": "The file's name without .csv, as list_invoices shows it."}},
			"required":             []string{"filename"},
			"additionalProperties": false,
		}),
		OutputSchema: mustJSON(objectSchema(obj{"filename": typed("string"), "path": typed("string"), "deleted": typed("boolean")})),
		// It destroys a file. Deleting it again changes nothing more, but
		// answers deleted: false, so the same call twice is not the same.
		Annotations: mustJSON(obj{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}),
		Approval:    mcpgate.ApprovalRequired,
		Request:     &mcpgate.Request{Method: "DELETE", Path: "/invoices/{filename}"},
	}
}

// savedFileSchema describes a saved invoice file.
func savedFileSchema() obj {
	return objectSchema(obj{"filename": typed("string"), "path": typed("string"), "rows": typed("integer"), "total": typed("number")})
}

// readOnly returns the annotations of a tool that only computes or reads
// the demo's own data: it changes nothing, so it destroys nothing and may
// be repeated, and it reaches nothing outside the demo.
func readOnly() json.RawMessage {
	return mustJSON(obj{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
}

// typed returns the schema of a plain value of one JSON type.
func typed(t string) obj { return obj{"type": t} }

// objectSchema returns an object schema whose listed properties are all
// required.
func objectSchema(props obj) obj {
	required := make([]string, 0, len(props))
	for name := range props {
		required = append(required, name)
	}
	slices.Sort(required)
	return obj{"type": "object", "properties": props, "required": required}
}

// mustJSON encodes a schema built in this file; maps encode with sorted
// keys, so the result is the same on every run.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values above are plain maps, slices and strings
	}
	return b
}
