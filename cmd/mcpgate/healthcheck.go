package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheckFlags are the flags of `mcpgate healthcheck`.
type healthcheckFlags struct {
	addr, url string
	timeout   time.Duration
}

// runHealthcheck runs `mcpgate healthcheck`: it GETs the running
// gateway's /readyz (or --url) and succeeds only on 200. A container's
// HEALTHCHECK runs it, as the image has no shell or curl; it reads
// MCPGATE_ADDR as serve does, so it finds the gateway from the same
// environment.
func runHealthcheck(ctx context.Context, env *Env, args []string) error {
	var f healthcheckFlags
	fs := newFlagSet(env, "healthcheck", "healthcheck [--addr ADDR | --url URL] [--timeout D]")
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8094", "the address serve listens on (its --addr); the check GETs /readyz there on loopback")
	fs.StringVar(&f.url, "url", "", "the URL to GET instead (e.g. http://127.0.0.1:8094/healthz)")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, env, args); err != nil {
		return helpIsOK(err)
	}
	target := f.url
	if target == "" {
		target = readyzURL(f.addr)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	return checkHealth(ctx, env, target)
}

// readyzURL is /readyz on the loopback side of a listen address: a
// wildcard host (":8094", "0.0.0.0:8094", "[::]:8094") becomes 127.0.0.1.
func readyzURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "80"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}

// checkHealth GETs target and prints its answer; a status other than 200
// is an error.
func checkHealth(ctx context.Context, env *Env, target string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s: HTTP %d %s", target, resp.StatusCode, answer)
	}
	fmt.Fprintln(env.Stdout, answer)
	return nil
}
