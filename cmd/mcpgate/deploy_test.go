package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// No container engine runs in CI: these tests check the deploy files with
// a YAML parser against the binary's own flags and routes, and run the
// Dockerfile's build command in a script.

// serveEnvNames returns MCPGATE_<FLAG> for every serve flag.
func serveEnvNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	out := &syncBuffer{}
	env, _, _ := newTestEnv(nil)
	env.Stdout, env.Stderr = out, out
	if err := runHelp(t.Context(), env, []string{"serve"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range flagLine.FindAllStringSubmatch(out.String(), -1) {
		names["MCPGATE_"+strings.ToUpper(strings.ReplaceAll(f[1], "-", "_"))] = true
	}
	return names
}

// mustParseYAML parses every document of a YAML file.
func mustParseYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var docs []map[string]any
	dec := yaml.NewDecoder(f)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				return docs
			}
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, doc)
	}
}

// dig follows keys (string keys of maps, int indexes of lists) into v.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestComposeFile: compose.yaml runs PostgreSQL and two replicas built
// from the Dockerfile behind a proxy, every replica setting a serve flag
// by its MCPGATE_* name, with the database, the secret key they share and
// the drain configured.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	envNames := serveEnvNames(t)
	doc := mustParseYAML(t, "../../compose.yaml")[0]
	services, _ := doc["services"].(map[string]any)
	replicas := 0
	for name, svc := range services {
		if !strings.HasPrefix(name, "mcpgate") {
			continue
		}
		replicas++
		env, _ := dig(svc, "environment").(map[string]any)
		for k := range env {
			if !envNames[k] {
				t.Errorf("compose %s sets %s, which is no serve flag", name, k)
			}
		}
		for _, k := range []string{"MCPGATE_DB", "MCPGATE_ADDR", "MCPGATE_PUBLIC_URL", "MCPGATE_DRAIN_TIMEOUT", "MCPGATE_SECRET_KEY"} {
			if env[k] == nil {
				t.Errorf("compose %s lacks %s", name, k)
			}
		}
		if dig(svc, "build") != "." {
			t.Errorf("compose %s is not built from the Dockerfile", name)
		}
	}
	if replicas != 2 || services["postgres"] == nil || services["proxy"] == nil {
		t.Errorf("compose services: %d replicas, postgres %v, proxy %v", replicas, services["postgres"] != nil, services["proxy"] != nil)
	}
	caddy, err := os.ReadFile("../../deploy/Caddyfile")
	if err != nil || !strings.Contains(string(caddy), "health_uri /readyz") || !strings.Contains(string(caddy), "mcpgate-2:8094") {
		t.Errorf("deploy/Caddyfile: %v; it must check /readyz of both replicas", err)
	}
}

// TestKubernetesManifests: deploy/k8s holds a Deployment (readiness on
// /readyz, liveness on /healthz, both routes the gateway serves, the port
// it listens on, MCPGATE_* variables that are serve flags, the DSN and
// the secret key every replica shares from the Secret, a grace period longer than the drain), a Service, a
// PodDisruptionBudget and the Secret.
func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	envNames := serveEnvNames(t)
	files, err := filepath.Glob("../../deploy/k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	kinds := map[string]map[string]any{}
	for _, f := range files {
		for _, doc := range mustParseYAML(t, f) {
			kind, _ := doc["kind"].(string)
			if doc["apiVersion"] == nil || kind == "" || dig(doc, "metadata", "name") == nil {
				t.Errorf("%s: a document without apiVersion, kind or metadata.name", f)
			}
			kinds[kind] = doc
		}
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget", "Secret"} {
		if kinds[k] == nil {
			t.Errorf("no %s in deploy/k8s", k)
		}
	}
	if d := kinds["Deployment"]; d != nil {
		checkDeployment(t, d, envNames, kinds["Secret"])
	}
	g := mustStartGateway(t)
	for _, path := range []string{"/readyz", "/healthz"} {
		send(t, http.MethodGet, g.URL()+path, nil, "").check(t, want{status: http.StatusOK})
	}
}

// checkDeployment checks the Deployment's container against serve.
func checkDeployment(t *testing.T, d map[string]any, envNames map[string]bool, secret map[string]any) {
	t.Helper()
	c := dig(d, "spec", "template", "spec", "containers", 0)
	if dig(c, "image") == nil || dig(c, "ports", 0, "containerPort") != 8094 {
		t.Errorf("container image %v, port %v; want an image and port 8094", dig(c, "image"), dig(c, "ports", 0, "containerPort"))
	}
	if p := dig(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
		t.Errorf("readiness probe on %v, want /readyz", p)
	}
	if p := dig(c, "livenessProbe", "httpGet", "path"); p != "/healthz" {
		t.Errorf("liveness probe on %v, want /healthz", p)
	}
	env, _ := dig(c, "env").([]any)
	addr, fromSecret := "", map[string]bool{}
	for _, e := range env {
		name, _ := dig(e, "name").(string)
		if !envNames[name] {
			t.Errorf("the Deployment sets %s, which is no serve flag", name)
		}
		if name == "MCPGATE_ADDR" {
			addr, _ = dig(e, "value").(string)
		}
		if ref := dig(e, "valueFrom", "secretKeyRef", "key"); ref != nil && dig(secret, "stringData", ref.(string)) == nil {
			t.Errorf("%s comes from Secret key %v, which the Secret lacks", name, ref)
		} else if ref != nil {
			fromSecret[name] = true
		}
	}
	for _, name := range []string{"MCPGATE_DB", "MCPGATE_SECRET_KEY"} {
		if !fromSecret[name] {
			t.Errorf("the Deployment does not take %s from the Secret (every replica must share it)", name)
		}
	}
	if addr != ":8094" {
		t.Errorf("MCPGATE_ADDR = %q, want :8094 (the containerPort)", addr)
	}
	grace, _ := dig(d, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if grace <= 35 {
		t.Errorf("terminationGracePeriodSeconds %d is not longer than the drain (5s delay + 30s timeout)", grace)
	}
}

// TestDockerfile: the Dockerfile is multi-stage, builds a static binary
// (CGO_ENABLED=0), runs it as non-root on distroless with a HEALTHCHECK
// by the binary itself; scripts/check-dockerfile.sh runs its build
// command (skipped with -short: it builds the whole binary).
func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{"AS build", "CGO_ENABLED=0", "FROM gcr.io/distroless/static", "USER nonroot", `HEALTHCHECK`, `"mcpgate", "healthcheck"`, "MCPGATE_ADDR=:8094", `CMD ["serve"]`} {
		if !strings.Contains(strings.ReplaceAll(df, "/usr/local/bin/mcpgate", "mcpgate"), want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	if testing.Short() {
		t.Skip("-short: not building the image's binary")
	}
	out, err := exec.Command("sh", "../../scripts/check-dockerfile.sh", "../..").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "check-dockerfile: ok") {
		t.Errorf("scripts/check-dockerfile.sh: %v\n%s", err, out)
	}
}
