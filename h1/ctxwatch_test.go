package h1

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// pipeConn is a connection of the transport over one end of a pipe, whose
// other end the test reads to learn that the watch closed it.
func pipeConn(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return newConn(a, "pipe"), b
}

// closed reports whether the watch closed the connection whose other
// end is peer, waiting up to a few seconds for it.
func closed(peer net.Conn) bool {
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := peer.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

// An exchange is watched (context.AfterFunc) only at the second look
// after it began, so one that ends before makes no watch; a watched one
// is closed by its context's end, and its ticket then reports so. A
// ticket stopped before, or of an earlier exchange on the connection,
// does not touch the connection's next watch.
func TestContextWatchedOnlyAfterALook(t *testing.T) {
	tr := &Transport{watching: true} // the test looks itself (watchDue)
	c, peer := pipeConn(t)
	idle := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	fast := tr.watch(ctx, c)
	tr.watchDue(&idle)
	if c.watch.stop != nil || tr.afterFuncs != 0 {
		t.Fatal("an exchange was watched at the first look after it began")
	}
	if !fast.stop() {
		t.Fatal("stop of an unwatched exchange reported its connection closed")
	}

	slow := tr.watch(ctx, c)
	tr.watchDue(&idle)
	tr.watchDue(&idle)
	if c.watch.stop == nil || tr.afterFuncs != 1 {
		t.Fatalf("the exchange was not watched at the second look (%d watches)", tr.afterFuncs)
	}
	cancel()
	if !closed(peer) {
		t.Fatal("the context's end did not close the watched connection")
	}
	if slow.stop() || fast.stop() {
		t.Fatal("stop reported a connection its context closed as open, or a ticket stopped twice did")
	}

	next := tr.watch(context.Background(), c)
	if slow.stop() || !c.watch.listed {
		t.Fatal("an earlier exchange's ticket ended the connection's next watch")
	}
	if !next.stop() || tr.watched != nil {
		t.Fatal("the next exchange's watch did not stop cleanly")
	}
	long := tr.watch(context.Background(), c)
	tr.watchDue(&idle)
	tr.watchDue(&idle)
	if c.watch.stop == nil || tr.watched != nil {
		t.Fatal("a watched exchange stayed listed: a long one would keep the loop looking")
	}
	if !long.stop() {
		t.Fatal("stop of a watched exchange whose context never ended reported its connection closed")
	}
}

// A context that has ended when its exchange starts closes the connection
// at once, and the request never reaches the server, on a pooled
// connection too.
func TestEndedContextSendsNothing(t *testing.T) {
	var served atomic.Int32
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) { served.Add(1) })
	tr := newTransport(t, nil)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ctx := range []context.Context{context.Background(), ended, context.Background(), ended} {
		if _, _, _, err := postAll(ctx, tr, s.URL, "", "{}"); ctx == ended && !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	}
	if _, _, _, err := postAll(context.Background(), tr, s.URL, "", "{}"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ended, http.MethodPost, s.URL, nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip's error %v, want context.Canceled", err)
	}
	if n := served.Load(); n != 3 {
		t.Fatalf("the server got %d requests, want the 3 whose context had not ended", n)
	}
}

// A context that ends in the first milliseconds of its exchange, before
// the watch looks at it, still ends the exchange (at the next look).
func TestEarlyCancelEndsTheExchange(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		cancel() // as soon as the request is there
		<-release
	})
	tr := newTransport(t, nil)
	if _, _, _, err := postAll(ctx, tr, s.URL, "", "{}"); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if n := tr.Idle(); n != 0 {
		t.Errorf("%d idle connections after the cancelled post", n)
	}
}

// The watch's loop ends once it has found no exchange for watchLinger,
// and the next exchange starts it again.
func TestContextWatchLoopEnds(t *testing.T) {
	s := mustServer(t, echo)
	tr := newTransport(t, nil)
	for round := 1; round <= 2; round++ {
		if _, _, _, err := postAll(context.Background(), tr, s.URL, "", "{}"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(watchLinger + 5*time.Second)
		for {
			tr.wmu.Lock()
			starts, ends, watching := tr.watchStarts, tr.watchEnds, tr.watching
			tr.wmu.Unlock()
			if starts == round && ends == round && !watching {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the loop started %d times and ended %d times", round, starts, ends)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// A long exchange (an event stream held open) is watched once and then
// left to its context.AfterFunc: the loop does not go on looking for it,
// and the context's end still ends the stream.
func TestLongExchangeLeavesTheLoop(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := mustServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-release
	})
	tr := newTransport(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	deadline := time.Now().Add(watchLinger + 5*time.Second)
	for {
		tr.wmu.Lock()
		ended, watched := !tr.watching, tr.afterFuncs
		tr.wmu.Unlock()
		if ended && watched == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop still runs (%d watches) while the stream is open", watched)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("the stream's read after its context ended: %v, want context.Canceled", err)
	}
}
