// Package webhook tells the outside world what happened in the gateway:
// it keeps users' webhook subscriptions (Service), turns every published
// event into durable outbox rows, one per subscribed webhook (Outbox), and
// POSTs them, signed, with retries (Deliverer). Sign and Verify are the
// signature scheme; receivers written in Go may use Verify.
//
// A delivery is a POST of the event's JSON {id, type, created_at, data}
// with the headers Webhook-Id (the event's ID), Webhook-Timestamp (Unix
// seconds, when the attempt was signed) and Webhook-Signature
// ("sha256=" + hex HMAC-SHA256 of "<timestamp>.<body>"). Receivers should
// refuse timestamps more than five minutes (DefaultTolerance) from their
// clock and drop events whose ID they have seen.
//
// The package imports the root package and netguard; it must not
// import the transport, the pipeline, a backend or a store implementation.
package webhook
