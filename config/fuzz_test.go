package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no file makes Parse panic, and that every problem
// it reports names the file.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte(head + oneTool))
	f.Add([]byte("users:\n  - &u {name: a}\n  - <<: *u\nagents: [{id: x, owner: a, skills: [{name: s, kind: mcp}]}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data, exampleEnv)
		if err == nil {
			if c == nil {
				t.Fatal("no config and no error")
			}
			return
		}
		list, ok := err.(Errors)
		if !ok || len(list) == 0 {
			t.Fatalf("error %T %v is not a list of problems", err, err)
		}
		for _, e := range list {
			if e.File != "f.yaml" || e.Msg == "" {
				t.Fatalf("problem %+v", e)
			}
		}
	})
}
