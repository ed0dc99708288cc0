package h1

import (
	"bufio"
	"context"
	"net"
	"time"
)

// Sizes of a connection's buffers: a relayed request or its reply's head
// fits in one.
const (
	readBufSize  = 8 << 10
	writeBufSize = 8 << 10
)

// conn returns an idle connection to addr that is still open, or a new
// one.
// Connections whose parked body has not ended yet are passed over, and
// go back to the pool.
func (t *Transport) conn(ctx context.Context, addr string) (*conn, error) {
	var waiting []*conn
	defer func() {
		for _, c := range waiting {
			t.put(c)
		}
	}()
	for {
		c := t.takeIdle(addr)
		if c == nil {
			break
		}
		switch c.ready(t.idleTimeout()) {
		case connReady:
			c.reused = true
			return c, nil
		case connWaiting:
			waiting = append(waiting, c)
		default:
			c.nc.Close()
		}
	}
	nc, err := t.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newConn(nc, addr), nil
}

// newConn returns the pooled connection of nc, dialed to addr.
func newConn(nc net.Conn, addr string) *conn {
	fio := newConnIO(nc)
	c := &conn{nc: nc, lim: headLimit{r: fio, n: unlimited}, bw: bufio.NewWriterSize(fio, writeBufSize), addr: addr}
	c.br = bufio.NewReaderSize(&c.lim, readBufSize)
	c.closer = func() { c.nc.Close() }
	c.watch.c = c
	return c
}

// takeIdle removes the most recently used idle connection to addr from
// the pool; nil when there is none.
func (t *Transport) takeIdle(addr string) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[addr]
	if len(cs) == 0 {
		return nil
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	t.idle[addr] = cs[:len(cs)-1]
	return c
}

// put returns c to the pool, or closes it when the pool is full. The
// connections of addr idle past the timeout are closed meanwhile.
func (t *Transport) put(c *conn) {
	now := time.Now()
	c.idleAt = now
	t.mu.Lock()
	if t.idle == nil {
		t.idle = make(map[string][]*conn)
	}
	cs := t.idle[c.addr]
	var stale []*conn
	for len(cs) > 0 && now.Sub(cs[0].idleAt) >= t.idleTimeout() {
		stale = append(stale, cs[0])
		cs = cs[1:]
	}
	full := len(cs) >= t.maxIdle()
	if !full {
		cs = append(cs, c)
	}
	t.idle[c.addr] = cs
	t.mu.Unlock()
	for _, s := range stale {
		s.nc.Close()
	}
	if full {
		c.nc.Close()
	}
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return defaultIdleTimeout
}

func (t *Transport) maxIdle() int {
	if t.MaxIdlePerHost > 0 {
		return t.MaxIdlePerHost
	}
	return defaultMaxIdlePerHost
}
