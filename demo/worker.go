package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate"
	"github.com/mcpgate/mcpgate/auth"
)

// Names of the demo's agent skill and of the agent key its in-process
// worker uses.
const (
	AgentSkillName = "orders"
	WorkerKeyName  = "demo-worker"
)

// AgentSkill returns the demo's agent skill: its chat tool (which the
// registry adds) and the tools its worker declares.
func AgentSkill(declared ...*mcpgate.Tool) *mcpgate.Skill {
	return &mcpgate.Skill{
		AgentID: AgentID, Name: AgentSkillName, Kind: mcpgate.SkillAgent, Delivery: mcpgate.DeliveryPull,
		AutoApprove: true, Tools: declared, Source: mcpgate.SourceDemo,
	}
}

// WorkerKey makes a new agent key for the demo's in-process worker and
// revokes the ones earlier runs made, whose secrets are gone with them.
func WorkerKey(ctx context.Context, store mcpgate.Store, agentOwnerID string) (string, error) {
	var secret string
	err := store.Tx(ctx, func(tx mcpgate.Store) error {
		keys, err := tx.ListKeys(ctx, mcpgate.KeyFilter{AgentID: AgentID, Kind: mcpgate.KeyAgent})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.Name == WorkerKeyName && k.Source == mcpgate.SourceDemo && k.RevokedAt == nil {
				if err := tx.RevokeKey(ctx, k.ID, time.Now()); err != nil {
					return err
				}
			}
		}
		k, s := auth.NewKey(mcpgate.KeyAgent, agentOwnerID, AgentID, WorkerKeyName)
		k.Source = mcpgate.SourceDemo
		secret = s
		return tx.CreateKey(ctx, k)
	})
	if err != nil {
		return "", fmt.Errorf("make the demo worker's key: %w", err)
	}
	return secret, nil
}
