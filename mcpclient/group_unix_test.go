//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that a signal
// meant for the test's group (a terminal's interrupt) does not reach it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
