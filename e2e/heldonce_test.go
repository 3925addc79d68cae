package e2e

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestVectorsServedFromIndex: after flush, index and load, the vector field
// in output_fields returns the inserted vectors bit for bit, whether the
// sealed segment serves them from its index's stored vectors (HNSW under L2
// and IP hold them once, with no decoded column) or from its column (FLAT
// builds nothing; HNSW under COSINE, IVF_FLAT, IVF_SQ8, HNSW_SQ and HNSW_PQ
// and IVF_RABITQ keep the column, unless an FP32 refine store holds the
// vectors).
// The rows include values a normalisation or quantisation would change
// (tiny, huge, negative zero). Plain search, a filtered search, a range
// search (scored exactly over the column) and a query by key are checked.
func TestVectorsServedFromIndex(t *testing.T) {
	const rows, vdim = 1500, 16
	rng := rand.New(rand.NewPCG(15, 1))
	vecs := make([][]float32, rows)
	ids := make([]int64, rows)
	for i := range vecs {
		ids[i] = int64(i)
		v := make([]float32, vdim)
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
		switch i % 100 {
		case 1:
			v[0] = 1e-30 // below what a unit-length round trip keeps
		case 2:
			v[1] = 3e30
		case 3:
			v[2] = float32(math.Copysign(0, -1))
		}
		vecs[i] = v
	}
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	for _, tc := range []struct {
		name string
		idx  index.Index
	}{
		{"HNSW_L2", index.NewHNSWIndex(entity.L2, 16, 64)},
		{"HNSW_IP", index.NewHNSWIndex(entity.IP, 16, 64)},
		{"HNSW_COSINE", index.NewHNSWIndex(entity.COSINE, 16, 64)},
		{"IVF_FLAT", index.NewIvfFlatIndex(entity.L2, 8)},
		{"FLAT", index.NewFlatIndex(entity.L2)},
		{"IVF_SQ8", index.NewIvfSQ8Index(entity.L2, 8)},
		// Quantized graphs keep the column, except with an FP32 refine
		// store, which holds the vectors bit for bit and serves them.
		{"HNSW_SQ", index.NewGenericIndex("", map[string]string{"index_type": "HNSW_SQ", "metric_type": "L2", "sq_type": "SQ8"})},
		{"HNSW_SQ_FP32", index.NewGenericIndex("", map[string]string{
			"index_type": "HNSW_SQ", "metric_type": "L2", "sq_type": "FP16", "refine": "true", "refine_type": "FP32",
		})},
		{"HNSW_PQ", index.NewGenericIndex("", map[string]string{
			"index_type": "HNSW_PQ", "metric_type": "L2", "m": "4", "nbits": "8", "refine": "true", "refine_type": "SQ8",
		})},
		{"IVF_RABITQ", index.NewIvfRabitQIndex(entity.L2, 8)},
		{"IVF_RABITQ_FP32", index.NewGenericIndex("", map[string]string{
			"index_type": "IVF_RABITQ", "metric_type": "L2", "nlist": "8", "refine": "true", "refine_type": "FP32",
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll := "held_" + strings.ToLower(tc.name)
			schema := entity.NewSchema().WithName(coll).
				WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
				WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(vdim))
			require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
			_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
				WithInt64Column("id", ids).WithFloatVectorColumn("vec", vdim, vecs))
			require.NoError(t, err)
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
			it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vec", tc.idx))
			require.NoError(t, err)
			require.NoError(t, it.Await(ctx))
			lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
			require.NoError(t, err)
			require.NoError(t, lt.Await(ctx))

			same := func(idCol, vecCol column.Column) int {
				t.Helper()
				fv, ok := vecCol.(*column.ColumnFloatVector)
				require.True(t, ok, "vec is a %T", vecCol)
				for i := range idCol.Len() {
					id, err := idCol.GetAsInt64(i)
					require.NoError(t, err)
					got, err := fv.Value(i)
					require.NoError(t, err)
					require.Len(t, got, vdim)
					for j, x := range vecs[id] {
						require.Equal(t, math.Float32bits(x), math.Float32bits(got[j]), "row %d dim %d", id, j)
					}
				}
				return idCol.Len()
			}

			qr, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithLimit(rows).
				WithOutputFields("vec").WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err)
			require.Equal(t, rows, same(qr.GetColumn("id"), qr.GetColumn("vec")))

			qr, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithIDs(column.NewColumnInt64("id", []int64{1, 2, 3, 1499})).
				WithOutputFields("vec").WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err)
			require.Equal(t, 4, same(qr.GetColumn("id"), qr.GetColumn("vec")))

			queries := []entity.Vector{entity.FloatVector(vecs[7]), entity.FloatVector(vecs[701])}
			for _, filter := range []string{"", "id % 2 == 1"} {
				opt := milvusclient.NewSearchOption(coll, 10, queries).WithOutputFields("vec").WithConsistencyLevel(entity.ClStrong)
				if filter != "" {
					opt = opt.WithFilter(filter)
				}
				rs, err := c.Search(ctx, opt)
				require.NoError(t, err)
				require.Len(t, rs, 2)
				for _, r := range rs {
					require.Equal(t, 10, same(r.IDs, r.GetColumn("vec")))
				}
			}
			if tc.name != "HNSW_IP" && tc.name != "HNSW_COSINE" {
				rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, queries[:1]).WithOutputFields("vec").
					WithSearchParam("radius", "100").WithSearchParam("range_filter", "0").WithConsistencyLevel(entity.ClStrong))
				require.NoError(t, err)
				require.Equal(t, 5, same(rs[0].IDs, rs[0].GetColumn("vec")))
			}
		})
	}
}
