package h1

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// connIO reads and writes a TCP connection's socket with system calls the
// Go runtime is not told about (sysRead, sysWrite), waiting through the
// connection's poller as net.Conn does (syscall.RawConn), deadlines
// included. The socket is non-blocking, so no call blocks.
//
// Why: the runtime's monitor thread (sysmon) sleeps while no goroutine
// runs, and a system call made with the runtime's notice (every net.Conn
// Read and Write) wakes it and sets it polling every 20 µs until the
// process idles again. A relayed call is two such bursts, and each woke
// sysmon with a futex and cost it a few sleeps and context switches; with
// calls the runtime does not see, which leave it asleep, a relayed call
// costs the gateway 0.76-0.88 of the CPU it did on the project's VM
// (docs/performance.md, round 8). What the notice buys, handing the P to another thread while a
// call blocks, a non-blocking socket call never needs.
type connIO struct {
	nc  net.Conn
	raw syscall.RawConn
	// A read and a write may run at once, as on a net.Conn: each has its
	// own state.
	r, w sysOp
}

// sysOp is the state of one connIO call in progress: its buffer, how much
// it did and its error, and the callback RawConn runs, made once so that
// a call allocates nothing.
type sysOp struct {
	p     []byte
	n     int
	errno syscall.Errno
	f     func(fd uintptr) bool
	// noWait makes a read that finds nothing to read return
	// errWouldBlock instead of waiting (setNoWait).
	noWait bool
	// first, on a read, is what is left to write of a write held for it
	// (holdNextWrite), in held; wrote reports that the call's errno is
	// that write's.
	first, held []byte
	wrote       bool
	// hold, on a write, keeps its bytes for the next read; sent reports
	// that a write went out since startMessage.
	hold, sent bool
}

// newConnIO returns the reader and writer of nc's bytes: a connIO for a
// *net.TCPConn, nc itself for any other connection (a TLS one, or a type
// of its own whose Read and Write must run).
func newConnIO(nc net.Conn) io.ReadWriter {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	c := &connIO{nc: nc, raw: raw}
	c.r.f, c.w.f = c.r.read, c.w.write
	return c
}

// Read reads into p as net.Conn's Read does: at least one byte, or io.EOF
// at the end, or the error (a *net.OpError) of a deadline, a closed
// connection or a failed call.
func (c *connIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	op := &c.r
	op.p, op.n, op.errno, op.wrote = p, 0, 0, false
	err := c.raw.Read(op.f)
	if len(op.first) > 0 && err == nil {
		// The held write filled the socket's buffer: the rest is
		// written as Write does, and the read begins again.
		rest := op.first
		op.first = nil
		if _, err := c.Write(rest); err != nil {
			op.p = nil
			return 0, err
		}
		err = c.raw.Read(op.f)
	}
	op.p, op.first = nil, nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case op.wrote:
		return 0, c.opError("write", os.NewSyscallError("write", op.errno))
	case op.errno == syscall.EAGAIN:
		return 0, errWouldBlock
	case op.errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", op.errno))
	case op.n == 0:
		return 0, io.EOF
	}
	return op.n, nil
}

// read is the callback of Read: false when nothing waits to be read. A
// held write goes first, and once all of it is written the read waits at
// once, without the system call that would find nothing: whatever comes
// next (the answer, or a reset) comes after the poller cleared the
// socket's readiness for this read, so it wakes the wait.
func (op *sysOp) read(fd uintptr) bool {
	if len(op.first) > 0 {
		return op.sendFirst(fd)
	}
	for {
		n, errno := sysRead(fd, op.p)
		switch errno {
		case 0:
			op.n = n
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if !op.noWait {
				return false
			}
		}
		op.errno = errno
		return true
	}
}

// sendFirst writes the held bytes from the read's callback: false, to
// wait for the answer, once all of them are written; true, to return,
// when the socket's buffer is full (Read writes the rest as Write does)
// or the write failed (its errno is the call's).
func (op *sysOp) sendFirst(fd uintptr) bool {
	for len(op.first) > 0 {
		n, errno := sysWrite(fd, op.first)
		switch errno {
		case 0:
			op.first = op.first[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return true
		default:
			op.errno, op.wrote, op.first = errno, true, op.first[:0]
			return true
		}
	}
	return false
}

// startMessage marks the start of a message's writes (holdNextWrite).
func (c *connIO) startMessage() { c.w.sent = false }

// holdNextWrite makes the next Write keep its bytes for the Read that
// follows it, which writes them from its callback before it waits: a
// request's bytes, so that reading its answer begins by waiting, not with
// a read that finds nothing (a system call a relayed call). It does so
// only when none of the message went out since startMessage: a server
// may answer the first part of a request before the rest has come (a 401
// to a large upload), and the read that waits at once would miss an
// answer that came before it. Only a connection whose reads and writes
// take turns may hold a write.
func (c *connIO) holdNextWrite() { c.w.hold = !c.w.sent }

// setNoWait makes the reads that follow return errWouldBlock when nothing
// waits to be read, instead of waiting for it (on), or wait again (off).
func (c *connIO) setNoWait(on bool) { c.r.noWait = on }

// Write writes all of p as net.Conn's Write does, waiting while the
// socket's buffer is full; it returns how much was written and the error
// that stopped it.
func (c *connIO) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.w.hold {
		c.w.hold = false
		c.r.held = append(c.r.held[:0], p...)
		c.r.first = c.r.held
		return len(p), nil
	}
	op := &c.w
	op.p, op.n, op.errno, op.sent = p, 0, 0, true
	err := c.raw.Write(op.f)
	op.p = nil
	switch {
	case err != nil:
		return op.n, c.opError("write", err)
	case op.errno != 0:
		return op.n, c.opError("write", os.NewSyscallError("write", op.errno))
	}
	return op.n, nil
}

// write is the callback of Write: false when the socket's buffer is full
// before all of p went in.
func (op *sysOp) write(fd uintptr) bool {
	for len(op.p) > 0 {
		n, errno := sysWrite(fd, op.p)
		switch errno {
		case 0:
			op.n += n
			op.p = op.p[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			op.errno = errno
			return true
		}
	}
	return true
}

// opError is err as net.Conn reports it: a *net.OpError of op on the
// connection. The poller's own errors (a deadline, a closed connection)
// come as an OpError of "raw-read" or "raw-write", renamed.
func (c *connIO) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.nc.LocalAddr(), Addr: c.nc.RemoteAddr(), Err: err}
}

// rawRead reads from the non-blocking socket fd into p (not empty) with a
// system call the runtime is not told about (connIO says why).
func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}

// rawWrite writes p (not empty) to the non-blocking socket fd, the same way.
func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}
