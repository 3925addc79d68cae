package e2e

import (
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

func TestHNSWIndexPipeline(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "hnsw"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(3, 3))
	ms := genMovies(0, 3000, rng)
	_, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	live := map[int64]movie{}
	for _, m := range ms {
		live[m.id] = m
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 16, 100)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vector"))
	require.NoError(t, err)
	require.EqualValues(t, 3000, desc.IndexedRows)
	require.EqualValues(t, 3000, desc.TotalRows)
	require.Zero(t, desc.PendingIndexRows)
	require.Equal(t, "HNSW", desc.Params()["index_type"])

	var indexFiles []string
	require.NoError(t, filepath.WalkDir(filepath.Join(s.storageDir(t), "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			indexFiles = append(indexFiles, p)
		}
		return err
	}))
	require.NotEmpty(t, indexFiles)
	require.True(t, strings.HasSuffix(indexFiles[0], "/HNSW"))

	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	// Growing rows on top of the indexed segment stay searchable.
	more := genMovies(10000, 200, rng)
	_, err = c.Insert(ctx, insertOption(coll, more))
	require.NoError(t, err)
	for _, m := range more {
		live[m.id] = m
	}
	recall := func() float64 {
		hit, total := 0, 0
		for q := 0; q < 20; q++ {
			qv := genMovies(50000+q, 1, rng)[0].vec
			rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
				WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"ef": 64}`))
			require.NoError(t, err)
			want := map[int64]bool{}
			for _, id := range bruteForce(live, qv, 10) {
				want[id] = true
			}
			for i := 0; i < rs[0].ResultCount; i++ {
				id, _ := rs[0].IDs.GetAsInt64(i)
				if want[id] {
					hit++
				}
			}
			total += 10
		}
		return float64(hit) / float64(total)
	}
	require.GreaterOrEqual(t, recall(), 0.9)

	// ef smaller than k is refused, as in Milvus.
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(ms[0].vec)}).
		WithSearchParam("params", `{"ef": 5}`))
	require.ErrorContains(t, err, "ef(5)")

	// After a restart the index is loaded again; DropIndex needs a release.
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	require.GreaterOrEqual(t, recall(), 0.9)
	require.Error(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "vector")))
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "vector")))
	_, err = c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vector"))
	require.Error(t, err)
}
