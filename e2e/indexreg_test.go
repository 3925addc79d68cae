package e2e

import (
	"math/rand/v2"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestHNSWQuotedParamsBuild creates an HNSW index whose M and
// efConstruction arrive JSON-quoted ("\"16\""), which CreateIndex accepts:
// the build must accept them too (it once re-parsed them with a bare Atoi
// and failed), and searches must then run through the index.
func TestHNSWQuotedParamsBuild(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "hnsw_quoted"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(7, 7))
	ms := genMovies(0, 500, rng)
	_, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	idx := index.NewGenericIndex("vector", map[string]string{
		"index_type": "HNSW", "metric_type": "L2", "M": `"16"`, "efConstruction": `"64"`,
	})
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", idx))
	require.NoError(t, err, "CreateIndex accepts quoted integers")
	require.NoError(t, it.Await(ctx), "the build parses the parameters as CreateIndex does")
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vector"))
	require.NoError(t, err)
	require.EqualValues(t, 500, desc.IndexedRows)
	require.Equal(t, `"16"`, desc.Params()["M"], "the parameters are recorded as given")

	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	q := ms[42]
	rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q.vec)}).
		WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"ef": 32}`))
	require.NoError(t, err)
	require.Equal(t, 3, rs[0].ResultCount)
	id, err := rs[0].IDs.GetAsInt64(0)
	require.NoError(t, err)
	require.Equal(t, q.id, id, "a stored vector is its own nearest neighbour")

	// A quoted value out of range is refused at CreateIndex, as before.
	bad := index.NewGenericIndex("v2", map[string]string{"index_type": "HNSW", "metric_type": "L2", "M": `"1"`})
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", bad))
	require.ErrorContains(t, err, "param 'M' (1) should be in range [2, 2048]")
}
