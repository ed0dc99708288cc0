package main

import (
	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/events"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/tasks"
)

// newTasks returns the tasks service: tasks run through the gateway (the
// same pipeline as the MCP endpoint's calls), end with an event on the
// hub, and tell the MCP session that started them of their new status.
// Replicas on PostgreSQL share the tasks table, so a replica fails only
// the tasks whose runner stopped beating. Close stops the tasks this
// process runs, before the bus, the relay and the store close.
func (m *Main) newTasks(gw *gateway.Gateway, hub *events.Hub) *tasks.Service {
	svc := tasks.New(&tasks.Options{
		Store: m.store, Calls: gw, Events: hub, Agents: m.store, Logger: m.logger,
		Shared: m.Config.store.postgresDSN() != "",
		OnStatus: func(t *mcpgate.Task) {
			if t.SessionID != "" {
				hub.NotifySession(t.SessionID, "notifications/tasks/status", mcp.TaskStatusParams(t, tasks.DefaultPollInterval))
			}
		},
	})
	m.closers = append([]func() error{svc.Close}, m.closers...) // first: its calls still need the bus and the relay
	return svc
}
