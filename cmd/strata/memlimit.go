package main

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryShare is the part of the process's available memory that the Go
// runtime's soft memory limit is set to when neither GOMEMLIMIT nor the
// config file's "memoryLimit" says otherwise: the collector then works
// harder as the heap nears it instead of letting RSS run to 2–3× the live
// heap, while the rest stays free for page cache and the kernel.
const memoryShare = 0.75

// memoryLimit decides the soft memory limit in bytes (0 = none, the runtime
// default). configured is the config file's "memoryLimit" (nil = absent; 0
// disables the limit), envSet whether GOMEMLIMIT is set (the runtime has
// applied it already and it wins over the default), and available the bytes
// the process may use (0 = unknown).
func memoryLimit(configured *int64, envSet bool, available int64) int64 {
	switch {
	case configured != nil:
		return max(*configured, 0)
	case envSet || available <= 0:
		return 0
	}
	return int64(float64(available) * memoryShare)
}

// availableMemory returns the memory this process may use: the cgroup v2
// limit (memory.max) when one is set, else the machine's MemTotal; 0 when
// neither can be read.
func availableMemory() int64 {
	total := readMemTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, ok := parseCgroupMax(b); ok && (total == 0 || n < total) {
			return n
		}
	}
	return total
}

// parseCgroupMax parses a cgroup v2 memory.max file: a byte count, or "max"
// for no limit (ok false).
func parseCgroupMax(b []byte) (int64, bool) {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// readMemTotal returns MemTotal from /proc/meminfo in bytes, 0 if unknown.
func readMemTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return parseMemTotal(b)
}

// parseMemTotal extracts the "MemTotal: N kB" line of a /proc/meminfo text.
func parseMemTotal(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			if len(f) >= 3 && strings.EqualFold(f[2], "kB") {
				n *= 1024
			}
			return n
		}
	}
	return 0
}

// applyMemoryLimit sets the runtime's soft memory limit as memoryLimit
// decides and returns it (0 = left alone; a configured 0 lifts any limit).
func applyMemoryLimit(configured *int64) int64 {
	_, envSet := os.LookupEnv("GOMEMLIMIT")
	var available int64
	if configured == nil && !envSet {
		available = availableMemory() // read only when the default applies
	}
	limit := memoryLimit(configured, envSet, available)
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	} else if configured != nil && *configured == 0 {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	return limit
}
