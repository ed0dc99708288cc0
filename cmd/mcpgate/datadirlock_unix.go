//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"errors"
	"os"
	"syscall"
)

// lockFileAt takes an exclusive lock on the file at path, made if needed,
// without waiting: errLocked when another open file holds it. The lock
// lasts until the returned function closes the file, or the process ends.
func lockFileAt(path string) (func() error, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f.Close, nil
}
