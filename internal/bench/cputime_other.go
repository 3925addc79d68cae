//go:build !linux

package bench

import "time"

// threadCPUTime is unavailable on this OS: the CPU-time throughput is then
// reported as 0 and its ratio as "-".
func threadCPUTime() time.Duration { return 0 }
