//go:build !linux

package distance

import "time"

// threadCPUTime is unavailable on this OS; benchmarks then report wall
// time only.
func threadCPUTime() time.Duration { return 0 }
