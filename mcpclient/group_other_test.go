//go:build !unix

package mcpclient

import "os/exec"

// ownGroup leaves cmd as it is: process groups are a Unix notion.
func ownGroup(*exec.Cmd) {}
