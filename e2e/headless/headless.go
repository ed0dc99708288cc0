// Package headless drives a headless Chromium for the end-to-end tests of
// the dashboard and the OAuth pages: finding it, starting it, running
// steps with a bound, reading values from the page.
//
// It is used by tests only, and meets the gateway only over HTTP: it must
// not import any mcpgate package.
package headless

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of the Chromium to run: MCPGATE_CHROMIUM, or
// the distribution's. It skips t when there is none.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MCPGATE_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("MCPGATE_CHROMIUM: %v", err)
		}
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: the browser tests need it (apt-get install chromium, or set MCPGATE_CHROMIUM to its path)")
	return ""
}

// Start starts the headless Chromium at path with its own profile, for
// at most two minutes.
func Start(t testing.TB, path string) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	cancel := func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
	// The first action starts the browser and ties it to its context: run
	// one here, so that the shorter contexts of the steps don't end it.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx, cancel
}

// Browse runs steps in the browser for at most 20 seconds, and on failure
// shows where the browser got to.
func Browse(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		where, werr := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		if werr != nil {
			where = werr.Error()
		}
		t.Fatalf("browser: %s: %v; the page at that moment:\n%s", what, err, where)
	}
}

// Evaluate returns the value of a JavaScript expression in the page.
func Evaluate[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browser: %s: %v", expr, err)
	}
	return v
}
