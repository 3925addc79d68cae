package kafka

import (
	"testing"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/waltest"
)

// BenchmarkAppend is wal/local's BenchmarkAppend (waltest.BenchAppend) on an
// in-process kfake cluster. kfake keeps records in memory and answers over
// loopback TCP, so this measures the client side (franz-go producer,
// batching, the Kafka protocol round trip), not a real broker's disk or
// replication.
func BenchmarkAppend(b *testing.B) {
	waltest.BenchAppend(b, func(b *testing.B) wal.Log {
		l, err := Open(Config{Brokers: startCluster(b)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return l
	})
}

// BenchmarkReadTail is wal/local's BenchmarkReadTail on kfake (records come
// from the broker's memory over loopback TCP).
func BenchmarkReadTail(b *testing.B) {
	l, err := Open(Config{Brokers: startCluster(b)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	waltest.BenchReadTail(b, l)
}
