package mcpgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate"
)

func TestSleep(t *testing.T) {
	if !mcpgate.Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep with a live context reported that it was cut short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if mcpgate.Sleep(ctx, time.Hour) {
		t.Error("Sleep with an ended context reported that the hour passed")
	}
}
