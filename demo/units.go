package demo

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// unit is a unit of measure: a value in it times factor is the value in its
// category's base unit (metre, gram, millilitre). Temperatures convert with
// their own functions.
type unit struct {
	name     string
	category string
	factor   float64
}

// The categories of unit.
const (
	catLength      = "length"
	catMass        = "mass"
	catVolume      = "volume"
	catTemperature = "temperature"
)

// units are the units the converter knows, by lower-cased name. Volumes are
// US customary.
var units = indexUnits([]unit{
	{"mm", catLength, 0.001}, {"cm", catLength, 0.01}, {"m", catLength, 1}, {"km", catLength, 1000},
	{"in", catLength, 0.0254}, {"ft", catLength, 0.3048}, {"yd", catLength, 0.9144}, {"mi", catLength, 1609.344},
	{"mg", catMass, 0.001}, {"g", catMass, 1}, {"kg", catMass, 1000}, {"t", catMass, 1e6},
	{"oz", catMass, 28.349523125}, {"lb", catMass, 453.59237},
	{"ml", catVolume, 1}, {"l", catVolume, 1000}, {"tsp", catVolume, 4.92892159375},
	{"tbsp", catVolume, 14.78676478125}, {"cup", catVolume, 236.5882365}, {"floz", catVolume, 29.5735295625},
	{"pt", catVolume, 473.176473}, {"qt", catVolume, 946.352946}, {"gal", catVolume, 3785.411784},
	{"C", catTemperature, 0}, {"F", catTemperature, 0}, {"K", catTemperature, 0},
})

// unitNames lists the units in the order above, as the tool's schema
// offers them.
var unitNames = []string{
	"mm", "cm", "m", "km", "in", "ft", "yd", "mi",
	"mg", "g", "kg", "t", "oz", "lb",
	"ml", "l", "tsp", "tbsp", "cup", "floz", "pt", "qt", "gal",
	"C", "F", "K",
}

// indexUnits maps units by lower-cased name.
func indexUnits(list []unit) map[string]unit {
	m := make(map[string]unit, len(list))
	for _, u := range list {
		m[strings.ToLower(u.name)] = u
	}
	return m
}

// unitsRequest is the body of POST /convert/units.
type unitsRequest struct {
	Value *float64 `json:"value"`
	From  string   `json:"from"`
	To    string   `json:"to"`
}

// unitsResponse is the answer of POST /convert/units.
type unitsResponse struct {
	Value    float64 `json:"value"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Result   float64 `json:"result"`
	Category string  `json:"category"`
}

// handleConvertUnits converts a value between two units of one category.
func (a *api) handleConvertUnits(w http.ResponseWriter, r *http.Request) error {
	var req unitsRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Value == nil {
		return badRequest("value is required: the number to convert")
	}
	resp, err := convertUnits(*req.Value, req.From, req.To)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resp)
}

// convertUnits converts value from one unit to another.
func convertUnits(value float64, from, to string) (*unitsResponse, error) {
	f, err := lookupUnit("from", from)
	if err != nil {
		return nil, err
	}
	t, err := lookupUnit("to", to)
	if err != nil {
		return nil, err
	}
	if f.category != t.category {
		return nil, badRequest("cannot convert %s (%s) to %s (%s): the units measure different things", f.name, f.category, t.name, t.category)
	}
	var result float64
	if f.category == catTemperature {
		if result, err = convertTemperature(value, f.name, t.name); err != nil {
			return nil, err
		}
	} else {
		result = value * f.factor / t.factor
	}
	if math.IsInf(result, 0) {
		return nil, badRequest("%v %s in %s is out of range", value, f.name, t.name)
	}
	return &unitsResponse{Value: value, From: f.name, To: t.name, Result: round(result, 12), Category: f.category}, nil
}

// lookupUnit finds a unit by name, ignoring case.
func lookupUnit(field, name string) (unit, error) {
	if name == "" {
		return unit{}, badRequest("%s is required: one of %s", field, strings.Join(unitNames, ", "))
	}
	u, ok := units[strings.ToLower(name)]
	if !ok {
		return unit{}, badRequest("%s: unknown unit %q; known units: %s", field, name, strings.Join(unitNames, ", "))
	}
	return u, nil
}

// convertTemperature converts between C, F and K through kelvin, refusing
// temperatures below absolute zero.
func convertTemperature(v float64, from, to string) (float64, error) {
	kelvin := map[string]func(float64) float64{
		"C": func(c float64) float64 { return c + 273.15 },
		"F": func(f float64) float64 { return (f-32)*5/9 + 273.15 },
		"K": func(k float64) float64 { return k },
	}[from](v)
	if kelvin < 0 {
		return 0, badRequest("%v %s is below absolute zero", v, from)
	}
	switch to {
	case "C":
		return kelvin - 273.15, nil
	case "F":
		return (kelvin-273.15)*9/5 + 32, nil
	}
	return kelvin, nil
}

// round keeps digits significant digits of v, which hides the noise of
// binary floating point (0.30000000000000004 becomes 0.3).
func round(v float64, digits int) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', digits, 64), 64)
	if err != nil {
		panic(fmt.Sprintf("round %v: %v", v, err)) // FormatFloat output always parses
	}
	return r
}

// categoryUnits returns the names of the units of a category.
func categoryUnits(category string) []string {
	var names []string
	for _, n := range unitNames {
		if units[strings.ToLower(n)].category == category {
			names = append(names, n)
		}
	}
	return slices.Clip(names)
}
