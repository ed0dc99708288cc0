package demo

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// RatesDate is the date the demo's fixed exchange rates claim. They are
// demo values, never live rates.
const RatesDate = "2025-01-02"

// eurRates are fixed demo exchange rates: units of each currency per euro.
var eurRates = map[string]float64{
	"EUR": 1, "USD": 1.035, "GBP": 0.829, "JPY": 162.5, "CHF": 0.939, "CAD": 1.488,
	"AUD": 1.665, "CNY": 7.56, "INR": 88.7, "BRL": 6.4, "SEK": 11.48, "NOK": 11.78,
}

// zeroDecimal lists the currencies without minor units.
var zeroDecimal = map[string]bool{"JPY": true}

// currencyCodes returns the known currency codes, sorted.
func currencyCodes() []string {
	codes := make([]string, 0, len(eurRates))
	for c := range eurRates {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// currencyResponse is the answer of GET /convert/currency.
type currencyResponse struct {
	Amount    float64 `json:"amount"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Rate      float64 `json:"rate"`
	Result    float64 `json:"result"`
	RatesDate string  `json:"rates_date"`
}

// handleConvertCurrency converts an amount with the fixed demo rates.
func (a *api) handleConvertCurrency(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	raw := q.Get("amount")
	if raw == "" {
		return badRequest("amount is required: the amount of money to convert")
	}
	amount, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(amount, 0) || math.IsNaN(amount) {
		return badRequest("amount %q is not a number", raw)
	}
	resp, err := convertCurrency(amount, q.Get("from"), q.Get("to"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, resp)
}

// convertCurrency converts amount between two currencies through the euro.
// The rate is rounded to six decimals and the result to the target
// currency's minor unit.
func convertCurrency(amount float64, from, to string) (*currencyResponse, error) {
	from, to = strings.ToUpper(from), strings.ToUpper(to)
	for _, c := range [][2]string{{"from", from}, {"to", to}} {
		if _, ok := eurRates[c[1]]; !ok {
			return nil, badRequest("%s: unknown currency %q; known currencies: %s", c[0], c[1], strings.Join(currencyCodes(), ", "))
		}
	}
	rate := math.Round(eurRates[to]/eurRates[from]*1e6) / 1e6
	decimals := 2.0
	if zeroDecimal[to] {
		decimals = 0
	}
	scale := math.Pow(10, decimals)
	result := math.Round(amount*rate*scale) / scale
	if math.IsInf(result, 0) {
		return nil, badRequest("amount %v is out of range", amount)
	}
	return &currencyResponse{Amount: amount, From: from, To: to, Rate: rate, Result: result, RatesDate: RatesDate}, nil
}
