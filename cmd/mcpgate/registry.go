package main

import (
	"context"
	"log/slog"

	"github.com/mcpgate/mcpgate/bus"
	"github.com/mcpgate/mcpgate/registry"
)

// registryTopic is the bus topic on which a replica that changed agents,
// skills or tools tells the others to reload their registries.
const registryTopic = "registry"

// registrySync keeps every replica's registry fresh: a change made here is
// loaded here at once and signalled to the other replicas, which reload on
// the signal; a poll every interval catches what no signal told (the
// admin CLI, a signal lost while the bus reconnected).
type registrySync struct {
	reg    *registry.Registry
	bus    *bus.Bus
	logger *slog.Logger
}

// Changed reloads this replica's registry and tells the other replicas to
// reload theirs, so that a client told of a new tool list finds it on
// whichever replica its next request reaches.
func (s registrySync) Changed(ctx context.Context) error {
	err := s.reg.Reload(ctx)
	s.bus.Signal(ctx, registryTopic)
	return err
}

// follow reloads on every signal of a change, until ctx ends; the
// registry's own Watch polls beside it.
func (s registrySync) follow(ctx context.Context, signals <-chan struct{}) {
	for range signals {
		if err := s.reg.Reload(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("registry reload on a signal failed", "err", err)
		}
	}
}
