package ivf

import "golang.org/x/sys/unix"

// threadCPUNanos returns the CPU time of the calling OS thread in
// nanoseconds, or 0 if it cannot be read.
func threadCPUNanos() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}
