//go:build !linux

// Package cputime reads the CPU time of the calling OS thread, which
// benchmarks use instead of wall time on shared, loaded machines: it leaves
// out the time the thread waited for a CPU.
package cputime

import "time"

// Thread returns 0: this platform has no per-thread CPU clock here, so
// CPU-time figures are not reported.
func Thread() time.Duration { return 0 }
