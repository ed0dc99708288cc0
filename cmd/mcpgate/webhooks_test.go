package main

import (
	"errors"
	"strings"
	"testing"
)

func TestServeRefusesBadWebhookFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--webhook-backoff", "0s"},
		{"--webhook-timeout", "-1s"},
	} {
		env, _, stderr := newTestEnv(nil)
		if err := NewMain(env).ParseFlags(args); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("serve %v = %v, stderr %q; want a usage error naming the flag", args, err, stderr)
		}
	}
}
