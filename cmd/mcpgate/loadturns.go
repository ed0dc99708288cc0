package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// loadTurn is one target of `mcpgate load --turn`: a name for the report,
// and the MCP URL and API key ("none" for none) of its session.
type loadTurn struct {
	name, url, key string
}

// turnFlag collects the repeated --turn flags.
type turnFlag []loadTurn

// String shows the turns' names.
func (f *turnFlag) String() string {
	names := make([]string, len(*f))
	for i, t := range *f {
		names[i] = t.name
	}
	return strings.Join(names, ",")
}

// Set adds one turn, written "NAME URL KEY".
func (f *turnFlag) Set(v string) error {
	parts := strings.Fields(v)
	if len(parts) != 3 {
		return errors.New(`want "NAME URL KEY" (KEY none for no key)`)
	}
	key := parts[2]
	if key == "none" {
		key = ""
	}
	*f = append(*f, loadTurn{name: parts[0], url: parts[1], key: key})
	return nil
}

// loadTurns calls the tool through each turn's session in turn, one call
// at a time, until time or count run out, and reports each turn's
// latency and its p50 over the first turn's. The turns meet the machine's
// load of the same milliseconds: on a shared machine, runs taken one
// after the other can meet loads that differ by more than what the
// figures compared differ by.
func loadTurns(ctx context.Context, env *Env, c *loadConfig) error {
	sessions := make([]*loadSession, len(c.turns))
	results := make([]*loadResult, len(c.turns))
	for i, t := range c.turns {
		s := &loadSession{client: loadClient(t.url, 2), url: t.url, key: t.key}
		if err := s.initialize(ctx); err != nil {
			return fmt.Errorf("turn %s: %w", t.name, err)
		}
		defer s.close(context.WithoutCancel(ctx))
		sessions[i], results[i] = s, newLoadResult(nil)
	}
	runTurns(ctx, c, sessions, results)
	printTurns(env.Stdout, c, results)
	for i, r := range results {
		if r.ok() == 0 {
			return fmt.Errorf("turn %s: no call succeeded; first error: %v", c.turns[i].name, r.firstErr)
		}
	}
	return nil
}

// runTurns makes the rounds: each calls every session once, starting one
// further along than the round before, so that no turn always follows the
// same one. With --turn-gap it waits that long after each call.
func runTurns(ctx context.Context, c *loadConfig, sessions []*loadSession, results []*loadResult) {
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	start := time.Now()
	for round := 0; round*len(sessions) < c.requests && ctx.Err() == nil; round++ {
		for k := range sessions {
			i := (round + k) % len(sessions)
			t := time.Now()
			err := sessions[i].do(ctx, c, results[i])
			results[i].add(time.Since(t), err, ctx.Err() != nil)
			if c.turnGap > 0 {
				time.Sleep(c.turnGap)
			}
		}
	}
	for _, r := range results {
		r.elapsed = time.Since(start)
	}
}

// printTurns writes the report: a line per turn, then a summary line per
// turn that scripts read.
func printTurns(w io.Writer, c *loadConfig, results []*loadResult) {
	fmt.Fprintf(w, "tool %s, %d turns taken in turn, one call at a time, %s\n", c.tool, len(results), results[0].elapsed.Round(time.Millisecond))
	for _, r := range results {
		slices.Sort(r.latencies)
	}
	base := percentile(results[0].latencies, .5)
	for i, r := range results {
		p50 := percentile(r.latencies, .5)
		fmt.Fprintf(w, "%-12s calls: %d ok, %d failed; latency: p50 %s  p90 %s  p99 %s; p50 over %s's: %s\n", c.turns[i].name,
			r.ok(), r.errors, p50, percentile(r.latencies, .9), percentile(r.latencies, .99), c.turns[0].name, p50-base)
	}
	for i, r := range results {
		fmt.Fprintf(w, "turn: name=%s calls=%d p50_us=%d added_us=%d failed=%d\n", c.turns[i].name, r.ok(),
			percentile(r.latencies, .5).Microseconds(), (percentile(r.latencies, .5) - base).Microseconds(), r.errors)
	}
}

// percentile returns the p-th fraction of latencies, sorted; 0 when there
// are none.
func percentile(latencies []time.Duration, p float64) time.Duration {
	if len(latencies) == 0 {
		return 0
	}
	return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))]
}
