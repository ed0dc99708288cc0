package config

import "github.com/mcpgate/mcpgate"

// rateLimitFields are the fields of a skill's or a tool's rate_limit.
var rateLimitFields = []string{"per_minute", "burst"}

// rateLimit reads the rate_limit at f, nil when absent or wrong (recorded).
func (d *decoder) rateLimit(f *fields) *mcpgate.RateLimit {
	if f == nil || !f.has("rate_limit") {
		return nil
	}
	rf := d.fields(f.vals["rate_limit"], f.field("rate_limit"), rateLimitFields)
	if rf == nil {
		return nil
	}
	l := &mcpgate.RateLimit{PerMinute: d.positiveInt(rf, "per_minute"), Burst: d.positiveInt(rf, "burst")}
	for _, key := range rateLimitFields {
		if !rf.has(key) {
			d.errorf(rf.lineNode(key), rf.field(key), "is required: a positive integer")
		}
	}
	if l.PerMinute == 0 || l.Burst == 0 {
		return nil
	}
	return l
}
