//go:build !linux

package sysinfo

import "time"

// totalMemory is not measured off Linux.
func totalMemory() uint64 { return 0 }

// processCPU is not measured off Linux.
func processCPU() time.Duration { return 0 }

// diskBytes is not measured off Linux.
func diskBytes(string) (total, used float64) { return 0, 0 }
