//go:build windows

package upstream

import (
	"log/slog"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// groupAttr starts a child in a process group of its own, so that the
// console's interrupts meant for the gateway do not reach it.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// group is the job object a child runs in: the processes it starts join
// it too, and closing it kills them all.
type group windows.Handle

// joinGroup puts pid in a new job object that kills its processes when
// closed. A child that cannot be put in one is logged and killed alone.
func joinGroup(pid int, log *slog.Logger) group {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		log.Warn("upstream child: no job object; its own children may outlive it", "err", err)
		return group(0)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	_, err = windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if err == nil {
		err = assign(job, pid)
	}
	if err != nil {
		windows.CloseHandle(job)
		log.Warn("upstream child: no job object; its own children may outlive it", "err", err)
		return group(0)
	}
	return group(job)
}

// assign puts process pid in job.
func assign(job windows.Handle, pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	return windows.AssignProcessToJobObject(job, p)
}

// kill kills every process of the job by closing it, or p alone when the
// child has no job.
func (g group) kill(p *os.Process) {
	if g == 0 {
		p.Kill()
		return
	}
	windows.CloseHandle(windows.Handle(g))
}
