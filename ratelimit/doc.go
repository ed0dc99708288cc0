// Package ratelimit decides whether a caller may make one more call: token
// buckets kept in this process (Memory, on golang.org/x/time/rate) or shared
// by every replica through the database (Shared, which leases small batches
// of tokens so that most calls make no round trip).
//
// It must not import the transport, the pipeline, a backend or a concrete
// store: the shared buckets are reached through mcpgate.RateBucketStore.
package ratelimit
