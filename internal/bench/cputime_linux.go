package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime returns the CPU time consumed by the calling OS thread, or
// 0 if it cannot be read.
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
