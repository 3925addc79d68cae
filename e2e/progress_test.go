package e2e

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestIndexBuildProgress: GetIndexBuildProgress and GetIndexState report an
// index's build segment by segment: indexed rows are always the rows of the
// segments built so far, and reach the total when the state is Finished.
func TestIndexBuildProgress(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	const coll = "progress_movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(9, 10))
	sizes := []int{100, 200, 400}
	from := 0
	for _, n := range sizes {
		_, err := c.Insert(ctx, insertOption(coll, genMovies(from, n, rng)))
		require.NoError(t, err)
		from += n
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	// Every sum of whole segments.
	sums := map[int64]bool{}
	for mask := 0; mask < 1<<len(sizes); mask++ {
		var sum int64
		for i, n := range sizes {
			if mask&(1<<i) != 0 {
				sum += int64(n)
			}
		}
		sums[sum] = true
	}
	_, err := raw.GetIndexBuildProgress(ctx, &milvuspb.GetIndexBuildProgressRequest{CollectionName: coll})
	require.NoError(t, err)
	_, err = c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 8, 32)))
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := raw.GetIndexBuildProgress(ctx, &milvuspb.GetIndexBuildProgressRequest{CollectionName: coll})
		require.NoError(t, err)
		require.Zero(t, p.GetStatus().GetCode(), p.GetStatus().GetReason())
		require.EqualValues(t, 700, p.GetTotalRows())
		require.True(t, sums[p.GetIndexedRows()], "indexed rows %d are whole segments", p.GetIndexedRows())
		st, err := raw.GetIndexState(ctx, &milvuspb.GetIndexStateRequest{CollectionName: coll})
		require.NoError(t, err)
		require.Zero(t, st.GetStatus().GetCode())
		if st.GetState() == commonpb.IndexState_Finished {
			p, err = raw.GetIndexBuildProgress(ctx, &milvuspb.GetIndexBuildProgressRequest{CollectionName: coll})
			require.NoError(t, err)
			require.EqualValues(t, 700, p.GetIndexedRows())
			break
		}
		require.True(t, time.Now().Before(deadline), "index not built: %v, %d rows", st.GetState(), p.GetIndexedRows())
		time.Sleep(20 * time.Millisecond)
	}

	nf, err := raw.GetIndexBuildProgress(ctx, &milvuspb.GetIndexBuildProgressRequest{CollectionName: coll, IndexName: "nope"})
	require.NoError(t, err)
	require.EqualValues(t, 700, nf.GetStatus().GetCode())
}
