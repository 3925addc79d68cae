//go:build !linux

package ivf

// threadCPUNanos is unavailable on this OS; the benchmarks then report wall
// time only.
func threadCPUNanos() int64 { return 0 }
