//go:build !linux

package quota

// SystemMemory returns 0 off Linux: the memory limit is unknown unless
// configured, and memory protection stays off.
func SystemMemory() int64 { return 0 }

// anonResident is unknown off Linux.
func anonResident() (uint64, bool) { return 0, false }
