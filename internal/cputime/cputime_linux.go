// Package cputime reads the CPU time of the calling OS thread, which
// benchmarks use instead of wall time on shared, loaded machines: it leaves
// out the time the thread waited for a CPU.
package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Thread returns the CPU time consumed by the calling OS thread, or 0 if it
// cannot be read. Lock the goroutine to its thread (runtime.LockOSThread)
// around what is measured.
func Thread() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
