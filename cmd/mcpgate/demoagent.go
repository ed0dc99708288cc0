package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/agentkit"
	"github.com/mcpgate/mcpgate/demo"
	"github.com/mcpgate/mcpgate/examples/csvagent/csvq"
)

// prepareDemoAgent puts the demo's agent skill, answered by the example
// CSV agent, and makes the key its in-process worker connects with.
func (m *Main) prepareDemoAgent(ctx context.Context, d *demo.Details) error {
	declared := &mcpgate.Tool{
		Name: csvq.ToolName, Description: csvq.ToolDescription, InputSchema: json.RawMessage(csvq.ToolSchema),
		Annotations: json.RawMessage(csvq.ToolAnnotations),
	}
	if err := m.store.PutSkill(ctx, demo.AgentSkill(declared)); err != nil {
		return fmt.Errorf("demo agent skill: %w", err)
	}
	key, err := demo.WorkerKey(ctx, m.store, d.UserID)
	if err != nil {
		return err
	}
	w := agentkit.New(agentkit.Options{URL: m.Config.PublicURL, Key: key, Skill: demo.AgentSkillName, Logger: m.logger})
	w.Handle((&csvq.Agent{Table: csvq.Sample()}).Handle)
	m.demoWorker = w
	return nil
}

// runDemoWorker runs the demo's worker until ctx ends.
func (m *Main) runDemoWorker(ctx context.Context) {
	if err := m.demoWorker.Run(ctx); err != nil {
		m.logger.Error("demo agent worker stopped", "err", err)
	}
}
