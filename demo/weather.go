package demo

import (
	"math"
	"net/http"
	"slices"
	"strings"
)

// city is the built-in weather of one city, in metric units.
type city struct {
	slug, name, country string
	tempC               float64
	feelsC              float64
	conditions          string
	humidity            int
	windKPH             float64
	windDir             string
	forecast            [3]day
}

// day is one day of a city's forecast, in °C.
type day struct {
	highC, lowC float64
	conditions  string
}

// cities is the demo's built-in weather data. It is fixed, so every
// answer is the same; it is not a forecast of anything.
var cities = []city{
	{"amsterdam", "Amsterdam", "NL", 11, 8.5, "light rain", 87, 24, "SW", [3]day{{12, 7, "showers"}, {13, 8, "cloudy"}, {14, 9, "partly cloudy"}}},
	{"berlin", "Berlin", "DE", 9, 7, "overcast", 76, 14, "W", [3]day{{10, 3, "cloudy"}, {12, 4, "partly cloudy"}, {11, 5, "light rain"}}},
	{"buenos-aires", "Buenos Aires", "AR", 24, 25, "sunny", 58, 12, "NE", [3]day{{27, 18, "sunny"}, {28, 19, "partly cloudy"}, {25, 17, "thunderstorms"}}},
	{"cairo", "Cairo", "EG", 29, 28, "clear", 28, 16, "N", [3]day{{31, 19, "sunny"}, {32, 20, "sunny"}, {30, 19, "hazy"}}},
	{"london", "London", "GB", 12, 10.5, "drizzle", 81, 19, "SW", [3]day{{13, 8, "light rain"}, {14, 9, "cloudy"}, {15, 9, "sunny intervals"}}},
	{"mumbai", "Mumbai", "IN", 31, 37, "humid, hazy sunshine", 74, 13, "WSW", [3]day{{32, 26, "partly cloudy"}, {33, 26, "thunderstorms"}, {31, 25, "heavy rain"}}},
	{"new-york", "New York", "US", 16, 15, "partly cloudy", 55, 18, "NW", [3]day{{18, 10, "sunny"}, {17, 11, "cloudy"}, {14, 8, "rain"}}},
	{"paris", "Paris", "FR", 14, 13, "cloudy", 70, 11, "W", [3]day{{16, 9, "partly cloudy"}, {17, 10, "sunny"}, {15, 10, "showers"}}},
	{"reykjavik", "Reykjavik", "IS", 2, -4, "snow showers", 80, 35, "NE", [3]day{{3, -2, "snow showers"}, {1, -3, "clear"}, {2, -1, "sleet"}}},
	{"singapore", "Singapore", "SG", 30, 36, "thunderstorms", 84, 9, "S", [3]day{{31, 25, "thunderstorms"}, {32, 25, "showers"}, {31, 26, "partly cloudy"}}},
	{"sydney", "Sydney", "AU", 22, 22, "sunny", 60, 20, "SE", [3]day{{24, 16, "sunny"}, {23, 17, "partly cloudy"}, {21, 15, "showers"}}},
	{"tokyo", "Tokyo", "JP", 18, 17.5, "clear", 52, 10, "N", [3]day{{20, 13, "sunny"}, {21, 14, "cloudy"}, {19, 14, "rain"}}},
}

// citySlugs returns the slugs of the built-in cities, as the tool's schema
// offers them.
func citySlugs() []string {
	out := make([]string, len(cities))
	for i, c := range cities {
		out[i] = c.slug
	}
	return out
}

// findCity finds a city by slug or name, ignoring case and accepting
// spaces or underscores for dashes.
func findCity(name string) (*city, bool) {
	slug := strings.NewReplacer(" ", "-", "_", "-").Replace(strings.ToLower(strings.TrimSpace(name)))
	i := slices.IndexFunc(cities, func(c city) bool { return c.slug == slug })
	if i < 0 {
		return nil, false
	}
	return &cities[i], true
}

// weatherResponse is the answer of GET /weather/{city}.
type weatherResponse struct {
	City          string        `json:"city"`
	Country       string        `json:"country"`
	Units         string        `json:"units"`
	Temperature   float64       `json:"temperature"`
	FeelsLike     float64       `json:"feels_like"`
	TempUnit      string        `json:"temperature_unit"`
	Conditions    string        `json:"conditions"`
	Humidity      int           `json:"humidity"`
	WindSpeed     float64       `json:"wind_speed"`
	WindUnit      string        `json:"wind_unit"`
	WindDirection string        `json:"wind_direction"`
	Forecast      []forecastDay `json:"forecast"`
	Note          string        `json:"note"`
}

// forecastDay is one day of a forecast in the requested units.
type forecastDay struct {
	Day        int     `json:"day"`
	High       float64 `json:"high"`
	Low        float64 `json:"low"`
	Conditions string  `json:"conditions"`
}

// handleWeather answers the built-in weather of a city.
func (a *api) handleWeather(w http.ResponseWriter, r *http.Request) error {
	c, ok := findCity(r.PathValue("city"))
	if !ok {
		return statusf(http.StatusNotFound, "no weather data for %q; known cities: %s", r.PathValue("city"), strings.Join(citySlugs(), ", "))
	}
	units := r.URL.Query().Get("units")
	if units != "" && units != "metric" && units != "imperial" {
		return badRequest("units %q: use metric or imperial", units)
	}
	return writeJSON(w, http.StatusOK, weatherOf(c, units == "imperial"))
}

// weatherOf returns a city's weather, in imperial units if asked.
func weatherOf(c *city, imperial bool) *weatherResponse {
	temp, speed := func(v float64) float64 { return v }, func(v float64) float64 { return v }
	resp := &weatherResponse{Units: "metric", TempUnit: "°C", WindUnit: "km/h"}
	if imperial {
		temp = func(v float64) float64 { return math.Round((v*9/5+32)*10) / 10 }
		speed = func(v float64) float64 { return math.Round(v/1.609344*10) / 10 }
		resp = &weatherResponse{Units: "imperial", TempUnit: "°F", WindUnit: "mph"}
	}
	resp.City, resp.Country, resp.Conditions = c.name, c.country, c.conditions
	resp.Temperature, resp.FeelsLike, resp.Humidity = temp(c.tempC), temp(c.feelsC), c.humidity
	resp.WindSpeed, resp.WindDirection = speed(c.windKPH), c.windDir
	for i, d := range c.forecast {
		resp.Forecast = append(resp.Forecast, forecastDay{Day: i + 1, High: temp(d.highC), Low: temp(d.lowC), Conditions: d.conditions})
	}
	resp.Note = "built-in demo data, not a live forecast"
	return resp
}
