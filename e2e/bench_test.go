package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// BenchmarkInsert measures end-to-end gRPC inserts through the Milvus Go SDK
// into an in-process standalone server: 1,000-row batches of an Int64 primary
// key and a float vector, acknowledged only after the WAL fsync.
//
//	go test -run x -bench Insert -benchtime 20x ./e2e/
func BenchmarkInsert(b *testing.B) {
	for _, d := range []int{128, 768} {
		for _, clients := range []int{1, 4} {
			b.Run(fmt.Sprintf("dim=%d/clients=%d", d, clients), func(b *testing.B) { benchInsert(b, d, clients) })
		}
	}
}

func benchInsert(b *testing.B, d, clients int) {
	const batch = 1000
	s := startServer(b, b.TempDir())
	ctx := context.Background()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: s.addr})
	require.NoError(b, err)
	defer func() { _ = c.Close(ctx) }()
	schema := entity.NewSchema().WithName("bench").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(int64(d)))
	require.NoError(b, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("bench", schema)))
	rng := rand.New(rand.NewPCG(1, 1))
	vecs := make([][]float32, batch)
	for i := range vecs {
		vecs[i] = make([]float32, d)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()
		}
	}
	var mu sync.Mutex
	next := int64(0)
	b.SetBytes(int64(batch * (d*4 + 8)))
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan struct{}, b.N)
	for i := 0; i < b.N; i++ {
		work <- struct{}{}
	}
	close(work)
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				mu.Lock()
				base := next
				next += batch
				mu.Unlock()
				ids := make([]int64, batch)
				for i := range ids {
					ids[i] = base + int64(i)
				}
				_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("bench").
					WithInt64Column("id", ids).WithFloatVectorColumn("v", d, vecs))
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.ReportMetric(float64(b.N*batch)/el.Seconds(), "rows/s")
}

// BenchmarkRead measures reads over 1M rows (dim 16, one flushed batch of
// segments): filtered search at 1%, 10% and 50% selectivity, count(*) with
// and without a filter, and a filtered query returning 100 rows.
//
//	go test -run x -bench Read -benchtime 50x -timeout 30m ./e2e/
func BenchmarkRead(b *testing.B) {
	const rows, d = 1_000_000, 16
	s := startServer(b, b.TempDir())
	ctx := context.Background()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: s.addr})
	require.NoError(b, err)
	defer func() { _ = c.Close(ctx) }()
	schema := entity.NewSchema().WithName("read").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("bucket").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(d))
	require.NoError(b, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("read", schema)))
	rng := rand.New(rand.NewPCG(5, 5))
	const batch = 20000
	for base := 0; base < rows; base += batch {
		ids := make([]int64, batch)
		buckets := make([]int64, batch)
		vecs := make([][]float32, batch)
		for i := range ids {
			ids[i] = int64(base + i)
			buckets[i] = int64((base + i) % 100)
			vecs[i] = make([]float32, d)
			for j := range vecs[i] {
				vecs[i][j] = rng.Float32()
			}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("read").WithInt64Column("id", ids).
			WithInt64Column("bucket", buckets).WithFloatVectorColumn("v", d, vecs))
		require.NoError(b, err)
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption("read"))
	require.NoError(b, err)
	require.NoError(b, ft.Await(ctx))
	indexAndLoad(ctx, b, c, "read", entity.L2)
	q := make([]float32, d)
	for j := range q {
		q[j] = rng.Float32()
	}
	for _, sel := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("search/selectivity=%d%%", sel), func(b *testing.B) {
			opt := milvusclient.NewSearchOption("read", 10, []entity.Vector{entity.FloatVector(q)}).
				WithFilter(fmt.Sprintf("bucket < %d", sel)).WithConsistencyLevel(entity.ClEventually)
			start := time.Now()
			for i := 0; i < b.N; i++ {
				_, err := c.Search(ctx, opt)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "qps")
		})
	}
	for name, filter := range map[string]string{"count": "", "count/filtered": "bucket < 10"} {
		b.Run(name, func(b *testing.B) {
			opt := milvusclient.NewQueryOption("read").WithOutputFields("count(*)").WithConsistencyLevel(entity.ClEventually)
			if filter != "" {
				opt = opt.WithFilter(filter)
			}
			for i := 0; i < b.N; i++ {
				_, err := c.Query(ctx, opt)
				require.NoError(b, err)
			}
		})
	}
	b.Run("query/filtered-limit-100", func(b *testing.B) {
		opt := milvusclient.NewQueryOption("read").WithFilter("bucket == 7").WithLimit(100).
			WithOutputFields("id", "bucket").WithConsistencyLevel(entity.ClEventually)
		for i := 0; i < b.N; i++ {
			_, err := c.Query(ctx, opt)
			require.NoError(b, err)
		}
	})
}
