package mcp

// latestVersion is the protocol version offered to clients asking for one
// this server does not speak.
const latestVersion = "2025-11-25"

// supportedVersions lists the versions in the order of preference, for
// error messages.
const supportedVersions = "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"

// supported reports whether the server speaks protocol version v.
//
// 2024-11-05 stays on the list on purpose although it predates Streamable
// HTTP: old clients still send it in initialize (gateway guides copy it into
// their examples, as the BeeOS one does), and every method served here
// (initialize, ping, tools/list, tools/call, logging/setLevel, cancellation
// and progress) has the same shape in it. Answering such a client with
// latestVersion instead would make it disconnect, over no difference in
// what it can do here; the one difference that matters, batches, is
// handled by allowsBatch.
func supported(v string) bool {
	switch v {
	case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		return true
	}
	return false
}

// negotiate returns the version to use for a client that asked for
// requested: the same when supported, else the latest.
func negotiate(requested string) string {
	if supported(requested) {
		return requested
	}
	return latestVersion
}

// allowsBatch reports whether JSON-RPC batches are part of version v; they
// were removed in 2025-06-18.
func allowsBatch(v string) bool {
	return v == "2025-03-26" || v == "2024-11-05"
}

// primesStreams reports whether SSE streams of version v start with a
// priming event (an id with empty data), which came with 2025-11-25 and
// went with 2026-07-28, whose streams cannot be resumed.
func primesStreams(v string) bool {
	return v >= "2025-11-25" && !modern(v)
}
