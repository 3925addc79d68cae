package local

import (
	"testing"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/waltest"
)

// BenchmarkAppend measures durable (fsynced) append throughput and latency
// with several concurrent appenders, one record per call (waltest.BenchAppend).
func BenchmarkAppend(b *testing.B) {
	waltest.BenchAppend(b, func(b *testing.B) wal.Log {
		l, err := Open(Config{Dir: b.TempDir()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return l
	})
}

// BenchmarkReadTail measures reading back 1 KiB records from the page cache
// (waltest.BenchReadTail).
func BenchmarkReadTail(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), SegmentSize: 8 << 20}, nil)
	if err != nil {
		b.Fatal(err)
	}
	waltest.BenchReadTail(b, l)
}
