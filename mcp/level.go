package mcp

// defaultLevel is the minimum level of notifications/message for sessions
// that never sent logging/setLevel: "info", so debug chatter stays off
// unless a client asks for it.
const defaultLevel = 1

// levelIndex returns the severity of an MCP (syslog) log level, from debug
// (0) to emergency (7), or -1 for an unknown level.
func levelIndex(level string) int {
	switch level {
	case "debug":
		return 0
	case "info":
		return 1
	case "notice":
		return 2
	case "warning":
		return 3
	case "error":
		return 4
	case "critical":
		return 5
	case "alert":
		return 6
	case "emergency":
		return 7
	}
	return -1
}

// levelOrDefault returns the severity of a stored level, "" meaning the
// default.
func levelOrDefault(level string) int {
	if i := levelIndex(level); i >= 0 {
		return i
	}
	return defaultLevel
}
