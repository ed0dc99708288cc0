package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// idleWorkers is how many sessions `load --idle` opens or closes at once.
const idleWorkers = 16

// openIdle opens c.idle sessions through the same client code path as the
// load test (initialize, then notifications/initialized), leaves them
// idle, and reports how much the gateway's resident memory grew per
// session. One session is opened first, so that what the gateway sets up
// on its first session is not counted. The sessions are closed at the end.
func openIdle(ctx context.Context, env *Env, c *loadConfig) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: idleWorkers}, Timeout: time.Minute}
	if c.streams {
		client.Timeout = 0 // it would cut the held streams; ctx bounds the run
	}
	first := &loadSession{client: client, url: c.url, key: c.key}
	if err := first.initialize(ctx); err != nil {
		return fmt.Errorf("session 0: %w", err)
	}
	rss0, err := processRSS(c.pid)
	if err != nil {
		return err
	}
	start := time.Now()
	sessions, err := openSessions(ctx, client, c, c.idle)
	elapsed := time.Since(start)
	rss1, rssErr := processRSS(c.pid)
	defer closeSessions(ctx, append(sessions, first))
	if err != nil {
		return err
	}
	if rssErr != nil {
		return rssErr
	}
	perSession := float64(rss1-rss0) / float64(c.idle)
	what := "idle sessions"
	if c.streams {
		what = "idle sessions holding their GET streams"
	}
	fmt.Fprintf(env.Stdout, "%s: %d opened in %s\n", what, c.idle, elapsed.Round(time.Millisecond))
	fmt.Fprintf(env.Stdout, "gateway RSS: %d KiB before, %d KiB after, %.2f KiB per session\n", rss0, rss1, perSession)
	fmt.Fprintf(env.Stdout, "summary: sessions=%d rss_kib_per_session=%.2f\n", c.idle, perSession)
	return nil
}

// openSessions opens n sessions with idleWorkers at a time; on an error
// it returns the sessions opened so far, to be closed.
func openSessions(ctx context.Context, client *http.Client, c *loadConfig, n int) ([]*loadSession, error) {
	sessions := make([]*loadSession, n)
	errs := make([]error, idleWorkers)
	var wg sync.WaitGroup
	for w := range idleWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n && errs[w] == nil; i += idleWorkers {
				s := &loadSession{client: client, url: c.url, key: c.key}
				if errs[w] = s.initialize(ctx); errs[w] == nil {
					sessions[i] = s
					if c.streams {
						errs[w] = s.listen(ctx)
					}
				}
			}
		}()
	}
	wg.Wait()
	opened := sessions[:0]
	for _, s := range sessions {
		if s != nil {
			opened = append(opened, s)
		}
	}
	for _, err := range errs {
		if err != nil {
			return opened, fmt.Errorf("opening sessions: %w", err)
		}
	}
	return opened, nil
}

// listen opens the session's GET stream and holds it open, unread.
func (s *loadSession) listen(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	s.headers(req)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return fmt.Errorf("GET stream: HTTP %d", resp.StatusCode)
	}
	s.stream = resp.Body
	return nil
}

// closeSessions ends the sessions, idleWorkers at a time.
func closeSessions(ctx context.Context, sessions []*loadSession) {
	var wg sync.WaitGroup
	for w := range idleWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(sessions); i += idleWorkers {
				sessions[i].close(ctx)
			}
		}()
	}
	wg.Wait()
}

// processRSS returns a process's resident set size in KiB, from /proc.
func processRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the gateway's memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			return strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
