package quota

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SystemMemory returns the memory this process may use, in bytes: the
// cgroup's limit (v2 memory.max, else v1 memory.limit_in_bytes) when it is
// below the machine's memory, else the machine's memory; 0 when unknown.
func SystemMemory() int64 {
	var si syscall.Sysinfo_t
	var total int64
	if syscall.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			return n
		}
	}
	return total
}

// anonResident returns the process's resident anonymous memory (RssAnon of
// /proc/self/status): the Go heap's pages and memory mapped outside it
// (package offheap's regions); false when unknown.
func anonResident() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
