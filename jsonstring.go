package mcpgate

// AppendJSONString appends s to b as a JSON string, byte for byte what
// encoding/json writes for it (HTML-safe escapes included), for encoders
// written by hand on a hot path.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }
