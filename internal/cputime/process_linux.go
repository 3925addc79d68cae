package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Process returns the CPU time (user and system) consumed by every thread
// of the process so far, or 0 if it cannot be read. A build that runs on
// several goroutines is measured by the difference of two readings.
func Process() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
