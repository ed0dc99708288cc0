package deptest

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that keeps the failures reported to it.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(string, ...any) { r.errors++ }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nimport (\n\t\"fmt\"\n\t\"example.com/allowed\"\n\t\"example.com/other\"\n)\n"
	for name, text := range map[string]string{"p.go": src, "p_test.go": "package p\n\nimport _ \"example.com/tests\"\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	r := &recorder{TB: t}
	Check(r, "example.com/allowed")
	if r.errors != 1 {
		t.Errorf("Check reported %d imports, want 1 (example.com/other; not fmt, the allowed one or a test file's)", r.errors)
	}
}

func TestCheckNames(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nimport \"example.com/m\"\n\n// Credential in a comment is fine.\nfunc f(c *m.Call) string { return c.Credential.ID + m.Credential{}.ID }\n"
	for name, text := range map[string]string{"p.go": src, "p_test.go": "package p\n\nvar Credential = 1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	r := &recorder{TB: t}
	CheckNames(r, "Credential")
	if r.errors != 2 {
		t.Errorf("CheckNames reported %d uses, want 2 (the field and the type; not the comment or a test file's)", r.errors)
	}
}
