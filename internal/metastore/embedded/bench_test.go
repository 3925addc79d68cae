package embedded_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

// BenchmarkTxnPut measures one durable (fsynced) Txn of one Put.
func BenchmarkTxnPut(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	val := make([]byte, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		require.NoError(b, s.Txn(ctx, metastore.Put(fmt.Sprintf("bench/%d", i%1000), val)))
	}
}

// BenchmarkTxnPutGuarded measures a Txn with an IfEquals guard and a Put, as
// the TSO window save does.
func BenchmarkTxnPutGuarded(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	val := make([]byte, 8)
	require.NoError(b, s.Txn(ctx, metastore.Put("w", val)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		next := []byte{0, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
		require.NoError(b, s.Txn(ctx, metastore.IfEquals("w", val), metastore.Put("w", next)))
		val = next
	}
}

// BenchmarkGet measures a Get of a 256-byte value among 1000 keys.
func BenchmarkGet(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	val := make([]byte, 256)
	for i := 0; i < 1000; i++ {
		require.NoError(b, s.Txn(ctx, metastore.Put(fmt.Sprintf("bench/%04d", i), val)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := s.Get(ctx, fmt.Sprintf("bench/%04d", i%1000))
		require.NoError(b, err)
	}
}

// BenchmarkScan measures a Scan of 1000 keys of 256 bytes.
func BenchmarkScan(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	val := make([]byte, 256)
	for i := 0; i < 1000; i++ {
		require.NoError(b, s.Txn(ctx, metastore.Put(fmt.Sprintf("bench/%04d", i), val)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		kvs, err := s.Scan(ctx, "bench/")
		require.NoError(b, err)
		require.Len(b, kvs, 1000)
	}
}

// BenchmarkOpen measures opening (and, since values are checksummed,
// verifying) a file of n keys of 256 bytes.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "meta.db")
			s, err := embeddedOpen(path)
			require.NoError(b, err)
			ctx := context.Background()
			val := make([]byte, 256)
			for i := 0; i < n; i += 100 {
				ops := make([]metastore.Op, 0, 100)
				for j := i; j < i+100; j++ {
					ops = append(ops, metastore.Put(fmt.Sprintf("bench/%06d", j), val))
				}
				require.NoError(b, s.Txn(ctx, ops...))
			}
			require.NoError(b, s.Close())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := embeddedOpen(path)
				require.NoError(b, err)
				require.NoError(b, s.Close())
			}
		})
	}
}

func openBench(b *testing.B) *embedded.Store {
	b.Helper()
	s, err := embeddedOpen(filepath.Join(b.TempDir(), "meta.db"))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, s.Close()) })
	return s
}

func embeddedOpen(path string) (*embedded.Store, error) { return embedded.Open(path, nil) }
