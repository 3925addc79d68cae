package e2e

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// indexVectors gives every vector field of coll that has no index an exact
// one — FLAT with metric for float and int8 vectors (HNSW for int8, the only
// kind Milvus takes), BIN_FLAT (HAMMING unless metric is a binary one) for
// binary vectors, SPARSE_INVERTED_INDEX for sparse (BM25 for a BM25
// function's output, IP otherwise) — since, as in Milvus, a collection loads
// only when each of its vector fields has an index. Tests whose subject is
// not the index use it before loading.
func indexVectors(ctx context.Context, t testing.TB, c *milvusclient.Client, coll string, metric entity.MetricType) {
	t.Helper()
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	bm25 := map[string]bool{}
	for _, fn := range desc.Schema.Functions {
		if fn.Type == entity.FunctionTypeBM25 {
			for _, out := range fn.OutputFieldNames {
				bm25[out] = true
			}
		}
	}
	for _, f := range desc.Schema.Fields {
		var idx index.Index
		switch f.DataType {
		case entity.FieldTypeFloatVector, entity.FieldTypeFloat16Vector, entity.FieldTypeBFloat16Vector:
			idx = index.NewFlatIndex(metric)
		case entity.FieldTypeInt8Vector:
			idx = index.NewHNSWIndex(metric, 16, 64)
		case entity.FieldTypeBinaryVector:
			m := metric
			if m != entity.HAMMING && m != entity.JACCARD {
				m = entity.HAMMING
			}
			idx = index.NewBinFlatIndex(m)
		case entity.FieldTypeSparseVector:
			m := entity.IP
			if bm25[f.Name] {
				m = entity.BM25
			}
			idx = index.NewSparseInvertedIndex(m, 0)
		default:
			continue
		}
		if names, err := c.ListIndexes(ctx, milvusclient.NewListIndexOption(coll).WithFieldName(f.Name)); err == nil && len(names) > 0 {
			continue
		}
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, f.Name, idx))
		require.NoError(t, err, "index on %s.%s", coll, f.Name)
		require.NoError(t, it.Await(ctx))
	}
}

// indexAndLoad indexes coll's vector fields as indexVectors does and loads it.
func indexAndLoad(ctx context.Context, t testing.TB, c *milvusclient.Client, coll string, metric entity.MetricType) {
	t.Helper()
	indexVectors(ctx, t, c, coll, metric)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
}

// reindexFlat releases coll, replaces the index of field by FLAT with
// metric (an index fixes the metric a search may use) and loads coll again.
func reindexFlat(ctx context.Context, t testing.TB, c *milvusclient.Client, coll, field string, metric entity.MetricType) {
	t.Helper()
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, field)))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, field, index.NewFlatIndex(metric)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
}

// TestLoadNeedsVectorIndexes: as in Milvus, a collection loads only when
// every vector field has an index — none at all is code 700 "index not
// found[collection=…]", some missing are listed by name — and a vector
// field added while the collection is loaded is not searchable ("field … is
// not loaded, please reload the collection") until it has an index and the
// collection is loaded again.
func TestLoadNeedsVectorIndexes(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "needidx"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("a").WithDataType(entity.FieldTypeFloatVector).WithDim(2)).
		WithField(entity.NewField().WithName("b").WithDataType(entity.FieldTypeBinaryVector).WithDim(8))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1, 2}).
		WithFloatVectorColumn("a", 2, [][]float32{{1, 0}, {0, 1}}).
		WithBinaryVectorColumn("b", 8, [][]byte{{1}, {2}}))
	require.NoError(t, err)

	_, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.ErrorContains(t, err, "index not found[collection=needidx]")
	require.Equal(t, int32(700), merr.Code(err), "%v", err)
	_, err = c.LoadPartitions(ctx, milvusclient.NewLoadPartitionsOption(coll, "_default"))
	require.ErrorContains(t, err, "index not found[collection=needidx]")

	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "a", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	_, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.ErrorContains(t, err, "there is no vector index on field: [b], please create index firstly")
	st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
	require.NoError(t, err)
	require.Equal(t, entity.LoadStateNotLoad, st.State, "a refused load leaves the collection released")

	indexAndLoad(ctx, t, c, coll, entity.HAMMING)
	require.NoError(t, c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("n").WithDataType(entity.FieldTypeFloatVector).WithDim(2).WithNullable(true))))
	search := func(field string) error {
		_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 2, []entity.Vector{entity.FloatVector{1, 0}}).
			WithANNSField(field).WithConsistencyLevel(entity.ClStrong))
		return err
	}
	require.NoError(t, search("a"), "the fields loaded before still serve")
	err = search("n")
	require.ErrorContains(t, err, "field n is not loaded, please reload the collection")
	require.Equal(t, int32(2000), merr.Code(err), "%v", err)

	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	_, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.ErrorContains(t, err, "there is no vector index on field: [n], please create index firstly")
	indexAndLoad(ctx, t, c, coll, entity.L2)
	require.NoError(t, search("n"))
}
