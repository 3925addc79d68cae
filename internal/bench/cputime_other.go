//go:build !linux

package bench

import "time"

// threadCPUTime returns 0: this platform has no per-thread CPU clock here,
// so CPU-time figures are not reported.
func threadCPUTime() time.Duration { return 0 }
