package e2e

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// BenchmarkTransport measures gRPC round trips through the shared
// gRPC/REST listener: small searches from 8 concurrent clients, and 1000-row
// inserts of 128-dimensional vectors.
func BenchmarkTransport(b *testing.B) {
	srv := startServer(b, b.TempDir())
	ctx := context.Background()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: srv.addr})
	require.NoError(b, err)
	defer c.Close(ctx)
	const d = 128
	require.NoError(b, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("bench", d)))
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, 1000)
	for i := range vecs {
		vecs[i] = make([]float32, d)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()
		}
	}
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("bench").WithFloatVectorColumn("vector", d, vecs))
	require.NoError(b, err)
	b.Run("search8way", func(b *testing.B) {
		var wg sync.WaitGroup
		per := b.N/8 + 1
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					_, err := c.Search(ctx, milvusclient.NewSearchOption("bench", 10, []entity.Vector{entity.FloatVector(vecs[i%1000])}).
						WithConsistencyLevel(entity.ClEventually))
					if err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Wait()
	})
	b.Run("insert1000x128", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("bench").WithFloatVectorColumn("vector", d, vecs))
			require.NoError(b, err)
		}
	})
}
