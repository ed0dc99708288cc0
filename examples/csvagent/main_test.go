package main

import (
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string
		ok   bool
	}{
		{"key flag", []string{"-key", "bak_x"}, "", true},
		{"key env", nil, "bak_y", true},
		{"no key", nil, "", false},
		{"push without key", []string{"-push-addr", "127.0.0.1:0"}, "", true},
		{"bad flag", []string{"-nope"}, "bak_z", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MCPGATE_AGENT_KEY", tt.env)
			c, err := parseFlags(tt.args)
			if (err == nil) != tt.ok {
				t.Fatalf("parseFlags(%v) = %v, want ok=%v", tt.args, err, tt.ok)
			}
			if err == nil && c.key == "" && c.pushAddr == "" {
				t.Errorf("no key taken")
			}
		})
	}
}

func TestRunRefusesMissingFile(t *testing.T) {
	if err := run(t.Context(), []string{"-key", "bak_x", "-file", t.TempDir() + "/missing.csv"}); err == nil {
		t.Error("run with a missing file succeeded")
	}
}
