package e2e

import (
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestStructureMetrics: BIN_FLAT takes SUBSTRUCTURE and SUPERSTRUCTURE (as
// in Milvus; BIN_IVF_FLAT refuses them): a search returns exactly the rows
// the query is a substructure (resp. superstructure) of, each at distance
// 0, sealed and growing rows alike, and no others even when fewer than the
// limit match.
func TestStructureMetrics(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	// One byte per vector (dim 8): row i holds the bits of i.
	rows := make([][]byte, 64)
	ids := make([]int64, len(rows))
	for i := range rows {
		rows[i], ids[i] = []byte{byte(i)}, int64(i)
	}
	for _, metric := range []entity.MetricType{"SUBSTRUCTURE", "SUPERSTRUCTURE"} {
		coll := "structure_" + string(metric)
		schema := entity.NewSchema().WithName(coll).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("b").WithDataType(entity.FieldTypeBinaryVector).WithDim(8))
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
		_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "b", index.NewBinIvfFlatIndex(metric, 4)))
		require.ErrorContains(t, err, "metric type "+string(metric)+" not found or not supported, supported: [HAMMING JACCARD]")
		insert := func(lo, hi int) {
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids[lo:hi]).
				WithBinaryVectorColumn("b", 8, rows[lo:hi]))
			require.NoError(t, err)
		}
		insert(0, 40)
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		insert(40, 64) // growing
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "b", index.NewBinFlatIndex(metric)))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
		indexAndLoad(ctx, t, c, coll, metric)

		const q = 0b00010101
		var want []int64
		for i := range rows {
			and := q & i
			if metric == "SUBSTRUCTURE" && and == q || metric == "SUPERSTRUCTURE" && and == i {
				want = append(want, int64(i))
			}
		}
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 50, []entity.Vector{entity.BinaryVector([]byte{q})}).
			WithANNSField("b").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		var got []int64
		for i := range rs[0].ResultCount {
			id, err := rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
			got = append(got, id)
			require.Zero(t, rs[0].Scores[i], "a match is at distance 0")
		}
		require.ElementsMatch(t, want, got, "%s: exactly the matching rows", metric)
		require.Less(t, len(got), 50, "fewer rows match than the limit")
	}
}
