//go:build !windows

package upstream

import (
	"log/slog"
	"os"
	"syscall"
)

// groupAttr starts a child as the leader of a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// group is a child's process group, named by its leader's pid.
type group int

// joinGroup returns the group pid leads.
func joinGroup(pid int, _ *slog.Logger) group { return group(pid) }

// kill kills every process of the group, its leader p included.
func (g group) kill(*os.Process) { syscall.Kill(-int(g), syscall.SIGKILL) }
