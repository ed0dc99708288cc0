package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// apiCase is one request to the demo API and what it must answer.
type apiCase struct {
	name   string
	method string
	path   string
	body   string
	// contentType overrides application/json for a body.
	contentType string
	status      int
	// want is the whole JSON answer, or wantErr a part of its error.
	want    string
	wantErr string
}

// run sends the case to h and checks the answer.
func (c apiCase) run(t *testing.T, h http.Handler) {
	t.Helper()
	status, ctype, body := doAs(t, h, c.method, c.path, c.body, c.contentType)
	if status != c.status {
		t.Fatalf("%s %s: status %d, want %d; body %s", c.method, c.path, status, c.status, body)
	}
	if ctype != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ctype)
	}
	if c.wantErr != "" {
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil || !strings.Contains(e.Error, c.wantErr) {
			t.Fatalf("error %s, want one containing %q", body, c.wantErr)
		}
		return
	}
	if diff := cmp.Diff(decode(t, []byte(c.want)), decode(t, body)); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

// do sends one request through a real server on 127.0.0.1 with the API
// mounted at Prefix, as the gateway mounts it.
func do(tb testing.TB, h http.Handler, method, path, body string) (int, string, []byte) {
	tb.Helper()
	return doAs(tb, h, method, path, body, "")
}

// doAs is do with a body of the given content type (default JSON).
func doAs(tb testing.TB, h http.Handler, method, path, body, contentType string) (int, string, []byte) {
	tb.Helper()
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+Prefix+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// decode parses a JSON document for comparison.
func decode(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("not JSON: %s", b)
	}
	return v
}

func TestConvertUnits(t *testing.T) {
	h := NewAPI(t.TempDir())
	for _, c := range []apiCase{
		{name: "miles to km", body: `{"value": 1, "from": "mi", "to": "km"}`, status: 200,
			want: `{"value":1,"from":"mi","to":"km","result":1.609344,"category":"length"}`},
		{name: "feet to inches", body: `{"value": 2.5, "from": "ft", "to": "in"}`, status: 200,
			want: `{"value":2.5,"from":"ft","to":"in","result":30,"category":"length"}`},
		{name: "pounds to kg", body: `{"value": 10, "from": "lb", "to": "kg"}`, status: 200,
			want: `{"value":10,"from":"lb","to":"kg","result":4.5359237,"category":"mass"}`},
		{name: "tonne to ounces", body: `{"value": 1, "from": "t", "to": "oz"}`, status: 200,
			want: `{"value":1,"from":"t","to":"oz","result":35273.9619496,"category":"mass"}`},
		{name: "gallon to litres", body: `{"value": 1, "from": "gal", "to": "l"}`, status: 200,
			want: `{"value":1,"from":"gal","to":"l","result":3.785411784,"category":"volume"}`},
		{name: "cup to tablespoons", body: `{"value": 1, "from": "cup", "to": "tbsp"}`, status: 200,
			want: `{"value":1,"from":"cup","to":"tbsp","result":16,"category":"volume"}`},
		{name: "unit names ignore case", body: `{"value": 1, "from": "ML", "to": "Tsp"}`, status: 200,
			want: `{"value":1,"from":"ml","to":"tsp","result":0.202884136211,"category":"volume"}`},
		{name: "boiling water", body: `{"value": 100, "from": "C", "to": "F"}`, status: 200,
			want: `{"value":100,"from":"C","to":"F","result":212,"category":"temperature"}`},
		{name: "body temperature", body: `{"value": 98.6, "from": "F", "to": "C"}`, status: 200,
			want: `{"value":98.6,"from":"F","to":"C","result":37,"category":"temperature"}`},
		{name: "absolute zero", body: `{"value": 0, "from": "K", "to": "C"}`, status: 200,
			want: `{"value":0,"from":"K","to":"C","result":-273.15,"category":"temperature"}`},
		{name: "below absolute zero", body: `{"value": -300, "from": "C", "to": "K"}`, status: 400, wantErr: "below absolute zero"},
		{name: "different categories", body: `{"value": 1, "from": "kg", "to": "m"}`, status: 400,
			wantErr: "cannot convert kg (mass) to m (length)"},
		{name: "unknown unit", body: `{"value": 1, "from": "parsec", "to": "m"}`, status: 400,
			wantErr: `from: unknown unit "parsec"; known units: mm, cm`},
		{name: "missing value", body: `{"from": "m", "to": "km"}`, status: 400, wantErr: "value is required"},
		{name: "missing to", body: `{"value": 1, "from": "m"}`, status: 400, wantErr: "to is required"},
		{name: "value not a number", body: `{"value": "1", "from": "m", "to": "km"}`, status: 400, wantErr: "not valid JSON"},
		{name: "unknown field", body: `{"value": 1, "from": "m", "to": "km", "x": 1}`, status: 400, wantErr: `unknown field "x"`},
		{name: "two objects", body: `{"value": 1, "from": "m", "to": "km"} {}`, status: 400, wantErr: "exactly one JSON object"},
		{name: "out of range", body: `{"value": 1e308, "from": "mi", "to": "mm"}`, status: 400, wantErr: "out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.method, c.path = "POST", "/convert/units"
			c.run(t, h)
		})
	}
}

func TestConvertCurrency(t *testing.T) {
	h := NewAPI(t.TempDir())
	for _, c := range []apiCase{
		{name: "eur to usd", path: "?amount=100&from=EUR&to=USD", status: 200,
			want: `{"amount":100,"from":"EUR","to":"USD","rate":1.035,"result":103.5,"rates_date":"2025-01-02"}`},
		{name: "usd to eur", path: "?amount=103.5&from=usd&to=eur", status: 200,
			want: `{"amount":103.5,"from":"USD","to":"EUR","rate":0.966184,"result":100,"rates_date":"2025-01-02"}`},
		{name: "gbp to jpy has no minor unit", path: "?amount=10&from=GBP&to=JPY", status: 200,
			want: `{"amount":10,"from":"GBP","to":"JPY","rate":196.019300,"result":1960,"rates_date":"2025-01-02"}`},
		{name: "same currency", path: "?amount=5.5&from=CHF&to=CHF", status: 200,
			want: `{"amount":5.5,"from":"CHF","to":"CHF","rate":1,"result":5.5,"rates_date":"2025-01-02"}`},
		{name: "unknown code", path: "?amount=1&from=XXX&to=EUR", status: 400,
			wantErr: `from: unknown currency "XXX"; known currencies: AUD, BRL, CAD, CHF, CNY, EUR, GBP, INR, JPY, NOK, SEK, USD`},
		{name: "missing to", path: "?amount=1&from=EUR", status: 400, wantErr: `to: unknown currency ""`},
		{name: "missing amount", path: "?from=EUR&to=USD", status: 400, wantErr: "amount is required"},
		{name: "bad amount", path: "?amount=ten&from=EUR&to=USD", status: 400, wantErr: `amount "ten" is not a number`},
		{name: "infinite amount", path: "?amount=Inf&from=EUR&to=USD", status: 400, wantErr: "is not a number"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.method, c.path = "GET", "/convert/currency"+c.path
			c.run(t, h)
		})
	}
}

func TestWeather(t *testing.T) {
	h := NewAPI(t.TempDir())
	for _, c := range []apiCase{
		{name: "metric", path: "/london", status: 200, want: `{"city":"London","country":"GB","units":"metric",
			"temperature":12,"feels_like":10.5,"temperature_unit":"°C","conditions":"drizzle","humidity":81,
			"wind_speed":19,"wind_unit":"km/h","wind_direction":"SW","note":"built-in demo data, not a live forecast",
			"forecast":[{"day":1,"high":13,"low":8,"conditions":"light rain"},{"day":2,"high":14,"low":9,"conditions":"cloudy"},
			{"day":3,"high":15,"low":9,"conditions":"sunny intervals"}]}`},
		{name: "imperial by name", path: "/New%20York?units=imperial", status: 200, want: `{"city":"New York","country":"US",
			"units":"imperial","temperature":60.8,"feels_like":59,"temperature_unit":"°F","conditions":"partly cloudy",
			"humidity":55,"wind_speed":11.2,"wind_unit":"mph","wind_direction":"NW","note":"built-in demo data, not a live forecast",
			"forecast":[{"day":1,"high":64.4,"low":50,"conditions":"sunny"},{"day":2,"high":62.6,"low":51.8,"conditions":"cloudy"},
			{"day":3,"high":57.2,"low":46.4,"conditions":"rain"}]}`},
		{name: "unknown city", path: "/atlantis", status: 404,
			wantErr: `no weather data for "atlantis"; known cities: amsterdam, berlin, buenos-aires`},
		{name: "bad units", path: "/tokyo?units=kelvin", status: 400, wantErr: `units "kelvin": use metric or imperial`},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.method, c.path = "GET", "/weather"+c.path
			c.run(t, h)
		})
	}
}

func TestWeatherCities(t *testing.T) {
	h := NewAPI(t.TempDir())
	for _, slug := range citySlugs() {
		t.Run(slug, func(t *testing.T) {
			status, _, body := do(t, h, "GET", "/weather/"+slug, "")
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
		})
	}
	if n := len(cities); n < 12 {
		t.Errorf("%d cities, want at least 12", n)
	}
}

func TestNoRoute(t *testing.T) {
	h := NewAPI(t.TempDir())
	for _, c := range []apiCase{
		{name: "unknown path", method: "GET", path: "/nothing", status: 404, wantErr: "no endpoint GET /nothing; the demo API serves POST /convert/units"},
		{name: "wrong method", method: "GET", path: "/convert/units", status: 405, wantErr: "GET is not allowed on /convert/units; use POST"},
		{name: "wrong method with parameter", method: "DELETE", path: "/weather/paris", status: 405, wantErr: "use GET"},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

func TestSaveInvoice(t *testing.T) {
	dir := t.TempDir()
	h := NewAPI(dir)
	body := `{"rows": [
		{"date": "2025-03-01", "vendor": "ACME, Inc.", "description": "Anvils \"heavy\"", "amount": 1200.5},
		{"date": "2025-03-02", "vendor": "=HYPERLINK(\"x\")", "amount": 0.1},
		{"date": "2025-03-03", "vendor": "Büro Müller", "description": "two\nlines", "amount": -20.2}
	]}`
	// The path is relative to the data directory: results no longer show
	// where the server keeps its files.
	apiCase{method: "POST", path: "/invoices/march_2025/csv", body: body, status: 200,
		want: mustMarshal(t, map[string]any{
			"filename": "march_2025", "path": "demo-invoices/march_2025.csv", "rows": 3, "total": 1180.4,
		})}.run(t, h)
	got, err := os.ReadFile(filepath.Join(dir, "demo-invoices", "march_2025.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "date,vendor,description,amount\r\n" +
		"2025-03-01,\"ACME, Inc.\",\"Anvils \"\"heavy\"\"\",1200.50\r\n" +
		"2025-03-02,\"'=HYPERLINK(\"\"x\"\")\",,0.10\r\n" +
		"2025-03-03,Büro Müller,\"two\r\nlines\",-20.20\r\n" // line breaks in a quoted field become CRLF too
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "demo-invoices"))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only the file (no temporary files left)", len(entries))
	}
}

func TestSaveInvoiceRefused(t *testing.T) {
	dir := t.TempDir()
	h := NewAPI(dir)
	row := `{"rows":[{"date":"2025-01-01","vendor":"v","amount":1}]}`
	for _, c := range []apiCase{
		{name: "dot dot", path: "/invoices/..%2F..%2Fescape/csv", body: row, status: 400, wantErr: `filename "../../escape"`},
		{name: "encoded slash", path: "/invoices/a%2Fb/csv", body: row, status: 400, wantErr: `filename "a/b"`},
		{name: "dot", path: "/invoices/a.b/csv", body: row, status: 400, wantErr: `filename "a.b"`},
		{name: "too long", path: "/invoices/" + strings.Repeat("a", 65) + "/csv", body: row, status: 400, wantErr: "1 to 64"},
		{name: "backslash", path: "/invoices/..%5Cx/csv", body: row, status: 400, wantErr: "filename"},
		{name: "no rows", path: "/invoices/x/csv", body: `{"rows":[]}`, status: 400, wantErr: "rows: give 1 to 1000 rows"},
		{name: "bad date", path: "/invoices/x/csv", body: `{"rows":[{"date":"01/02/2025","vendor":"v","amount":1}]}`, status: 400,
			wantErr: `rows[0]: date "01/02/2025": use YYYY-MM-DD`},
		{name: "no vendor", path: "/invoices/x/csv", body: `{"rows":[{"date":"2025-01-01","vendor":" ","amount":1}]}`, status: 400,
			wantErr: "rows[0]: vendor is required"},
		{name: "no amount", path: "/invoices/x/csv", body: `{"rows":[{"date":"2025-01-01","vendor":"v"}]}`, status: 400,
			wantErr: "rows[0]: amount is required"},
		{name: "not JSON", path: "/invoices/x/csv", body: `rows`, status: 400, wantErr: "not valid JSON"},
		{name: "not sent as JSON", path: "/invoices/x/csv", body: `{"rows":[]}`, contentType: "text/plain", status: 415, wantErr: "Content-Type: application/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.method = "POST"
			c.run(t, h)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "demo-invoices")); err == nil {
		t.Error("a refused request created the invoice folder")
	}
}

func TestSaveInvoiceTraversalByPath(t *testing.T) {
	// Unescaped dot segments never reach the handler: the mux cleans
	// them, and the cleaned path is not an invoice route.
	dir := t.TempDir()
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, NewAPI(dir)))
	req := httptest.NewRequest("POST", Prefix+"/invoices/../../x/csv", strings.NewReader(`{"rows":[]}`))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if rec.Code == http.StatusOK {
		t.Fatalf("status 200 for a path with dot segments")
	}
	if matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*.csv")); len(matches) > 0 {
		t.Fatalf("files written outside the data dir: %v", matches)
	}
}

func TestListInvoices(t *testing.T) {
	dir := t.TempDir()
	h := NewAPI(dir)
	apiCase{method: "GET", path: "/invoices", status: 200, want: `{"invoices":[],"count":0}`}.run(t, h)
	save := func(name, body string) {
		if status, _, b := do(t, h, "POST", "/invoices/"+name+"/csv", body); status != 200 {
			t.Fatalf("save %s: %d %s", name, status, b)
		}
	}
	save("b", `{"rows":[{"date":"2025-01-01","vendor":"v","amount":10.25},{"date":"2025-01-02","vendor":"w","amount":0.5}]}`)
	save("a", `{"rows":[{"date":"2025-01-01","vendor":"v","amount":-3}]}`)
	save("a", `{"rows":[{"date":"2025-01-01","vendor":"v","amount":7}]}`) // replaces
	if err := os.WriteFile(filepath.Join(dir, "demo-invoices", "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Paths are relative to the data directory: results no longer show
	// where the server keeps its files.
	apiCase{method: "GET", path: "/invoices", status: 200, want: mustMarshal(t, map[string]any{"count": 2, "invoices": []any{
		map[string]any{"filename": "a", "path": "demo-invoices/a.csv", "rows": 1, "total": 7},
		map[string]any{"filename": "b", "path": "demo-invoices/b.csv", "rows": 2, "total": 10.75},
	}})}.run(t, h)
}

// mustMarshal encodes v as JSON text.
func mustMarshal(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
