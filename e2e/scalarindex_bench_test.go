package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// BenchmarkScalarIndex measures filtered count(*), filtered queries and
// filtered searches over 1M flushed rows (dim 8) in two collections with the
// same data, one without scalar indexes (X/scan) and one with an INVERTED
// index on bucket (Int64, 1000 values) and a Trie on tag (VarChar, 10000
// values) (X/index); each pair runs back to back.
//
//	go test -run x -bench ScalarIndex -benchtime 50x -timeout 30m ./e2e/
func BenchmarkScalarIndex(b *testing.B) {
	const rows, d = 1_000_000, 8
	const plain, indexed = "sidx_plain", "sidx_indexed"
	s := startServer(b, b.TempDir())
	ctx := context.Background()
	c, err := milvusclient.New(ctx, &milvusclient.ClientConfig{Address: s.addr})
	require.NoError(b, err)
	defer func() { _ = c.Close(ctx) }()
	for _, coll := range []string{plain, indexed} {
		schema := entity.NewSchema().WithName(coll).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("bucket").WithDataType(entity.FieldTypeInt64)).
			WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16)).
			WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(d))
		require.NoError(b, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	}
	rng := rand.New(rand.NewPCG(6, 6))
	const batch = 20000
	for base := 0; base < rows; base += batch {
		ids, buckets, tags := make([]int64, batch), make([]int64, batch), make([]string, batch)
		vecs := make([][]float32, batch)
		for i := range ids {
			ids[i] = int64(base + i)
			buckets[i] = rng.Int64N(1000)
			tags[i] = fmt.Sprintf("tag-%05d", rng.IntN(10000))
			vecs[i] = make([]float32, d)
			for j := range vecs[i] {
				vecs[i][j] = rng.Float32()
			}
		}
		for _, coll := range []string{plain, indexed} {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
				WithInt64Column("bucket", buckets).WithColumns(column.NewColumnVarChar("tag", tags)).
				WithFloatVectorColumn("v", d, vecs))
			require.NoError(b, err)
		}
	}
	for _, coll := range []string{plain, indexed} {
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(b, err)
		require.NoError(b, ft.Await(ctx))
	}
	for field, idx := range map[string]index.Index{"bucket": index.NewInvertedIndex(), "tag": index.NewTrieIndex()} {
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(indexed, field, idx))
		require.NoError(b, err)
		require.NoError(b, it.Await(ctx))
	}
	for _, coll := range []string{plain, indexed} {
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(b, err)
		require.NoError(b, lt.Await(ctx))
	}
	q := make([]float32, d)
	for j := range q {
		q[j] = rng.Float32()
	}
	type read struct {
		name string
		do   func(coll string) error
	}
	count := func(f string) func(string) error {
		return func(coll string) error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(f).WithOutputFields("count(*)").
				WithConsistencyLevel(entity.ClEventually))
			return err
		}
	}
	search := func(f string) func(string) error {
		return func(coll string) error {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(q)}).
				WithFilter(f).WithConsistencyLevel(entity.ClEventually))
			return err
		}
	}
	reads := []read{
		{"count/bucket==7", count("bucket == 7")},
		{"count/bucket<100", count("bucket < 100")},
		{"count/500<=bucket<510", count("500 <= bucket < 510")},
		{"count/tag-like-prefix-1%", count(`tag like "tag-001%"`)},
		{"count/tag-in-3", count(`tag in ["tag-00001", "tag-05000", "tag-09999"]`)},
		{"query/tag==-limit-100", func(coll string) error {
			_, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`tag == "tag-00042"`).WithLimit(100).
				WithOutputFields("id", "bucket").WithConsistencyLevel(entity.ClEventually))
			return err
		}},
		{"search/bucket<10", search("bucket < 10")},
		{"search/tag==", search(`tag == "tag-00042"`)},
		{"search/tag-like-prefix-10%", search(`tag like "tag-00%"`)},
	}
	for _, r := range reads {
		for _, mode := range []struct{ name, coll string }{{"scan", plain}, {"index", indexed}} {
			b.Run(r.name+"/"+mode.name, func(b *testing.B) {
				for range b.N {
					require.NoError(b, r.do(mode.coll))
				}
			})
		}
	}
}
