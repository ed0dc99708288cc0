package upstream

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate"
)

// stopGrace is how long a stdio child has to exit after its stdin closes
// before its process group is killed.
const stopGrace = 2 * time.Second

// child is an upstream server running as a child process in its own
// process group, speaking MCP over its stdin and stdout.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{} // closed once the process is reaped
	err    error         // why it exited, once exited is closed
	once   sync.Once
	group  group // the process group (Unix) or job (Windows) it leads
}

// startChild starts the skill's command with its expanded environment,
// logging its stderr line by line. The child is always reaped.
func startChild(sk *mcpgate.Skill, lookup mcpgate.LookupFunc, log *slog.Logger) (*child, error) {
	env, err := childEnv(sk, lookup)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := exec.Command(sk.Command, sk.Args...)
	cmd.Env, cmd.Dir = env, sk.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = groupAttr()
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, mcpgate.Errorf(mcpgate.EUNAVAILABLE, "skill %q: cannot start %s: %v", sk.Name, sk.Command, err)
	}
	c := &child{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{}), group: joinGroup(cmd.Process.Pid, log)}
	go logStderr(errR, log.With("pid", cmd.Process.Pid))
	go c.wait()
	return c, nil
}

// childEnv is the gateway's environment plus the skill's, with secrets
// expanded.
func childEnv(sk *mcpgate.Skill, lookup mcpgate.LookupFunc) ([]string, error) {
	env := os.Environ()
	for k, v := range sk.Env {
		val, err := mcpgate.ExpandSecrets(v, lookup)
		if err != nil {
			return nil, mcpgate.Errorf(mcpgate.EINVALID, "skill %q: env %s: %s", sk.Name, k, mcpgate.ErrorMessage(err))
		}
		env = append(env, k+"="+val)
	}
	return env, nil
}

// wait reaps the process and records why it exited.
func (c *child) wait() {
	c.err = c.cmd.Wait()
	if c.err == nil {
		c.err = fmt.Errorf("process exited")
	}
	close(c.exited)
}

// stop closes the child's stdin, waits a little for it to exit, then kills
// its whole process group; it returns once the child is reaped.
func (c *child) stop() {
	c.once.Do(func() {
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(stopGrace):
		}
		// Kill the group even when the leader is gone: its own children
		// must not outlive it.
		c.group.kill(c.cmd.Process)
		<-c.exited
		c.stdout.Close()
	})
}

// maxStderrLine is the longest stderr line logged whole; the rest of a
// longer line is dropped.
const maxStderrLine = 4096

// logStderr logs each line the child writes to stderr, cut to
// maxStderrLine. It reads to the end whatever the child writes, so that
// the child never blocks on a full pipe (or dies of SIGPIPE) however long
// its lines, and holds at most one cut line in memory.
func logStderr(r io.ReadCloser, log *slog.Logger) {
	defer r.Close()
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, cut, err := readLine(br)
		if len(line) > 0 || err == nil {
			if cut {
				line += "…"
			}
			log.Info("upstream stderr", "line", line)
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its end, keeping its first
// maxStderrLine bytes and discarding the rest; cut reports a discard.
func readLine(br *bufio.Reader) (line string, cut bool, err error) {
	frag, isPrefix, err := br.ReadLine()
	line = string(frag)
	for isPrefix && err == nil {
		cut = true
		_, isPrefix, err = br.ReadLine()
	}
	return line, cut, err
}
