package e2e

import (
	"context"
	"fmt"
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

// TestIVFIndexPipeline builds each IVF index type over a flushed segment,
// checks the file key, and measures recall@10 through the Go SDK at a small
// and a full nprobe. Probing every list must reach the encoding's ceiling
// and probing one list must lose recall, which shows that nprobe reaches the
// index. Floors (3,000 uniform random 8-d rows, nlist 16, 20 queries):
// IVF_FLAT is exact at nprobe=nlist; IVF_SQ8 keeps 8 bits per dimension
// (measured 0.99); IVF_PQ with m=4, nbits=8 keeps 4 bytes of 32 (measured
// 0.895), so its floor is 0.75.
func TestIVFIndexPipeline(t *testing.T) {
	const nlist = 16
	for _, tc := range []struct {
		name    string
		idx     index.Index
		full    float64
		restart bool
	}{
		{"IVF_FLAT", index.NewIvfFlatIndex(entity.L2, nlist), 1.0, false},
		{"IVF_SQ8", index.NewIvfSQ8Index(entity.L2, nlist), 0.9, true},
		{"IVF_PQ", index.NewIvfPQIndex(entity.L2, nlist, 4, 8), 0.75, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			m := buildIndexedMovies(ctx, t, tc.name, tc.idx)
			c, coll, queries := m.c, m.coll, m.queries
			var err error
			recall := func(nprobe int) float64 { return m.recall(ctx, t, fmt.Sprintf(`{"nprobe": %d}`, nprobe)) }
			full, one := recall(nlist), recall(1)
			t.Logf("%s recall@10: nprobe=%d %.3f, nprobe=1 %.3f", tc.name, nlist, full, one)
			require.GreaterOrEqual(t, full, tc.full)
			require.Less(t, one, full)

			// nprobe must be a positive integer and at most nlist.
			q := entity.FloatVector(queries[0])
			for _, p := range []string{`{"nprobe": 0}`, `{"nprobe": -3}`, `{"nprobe": 2.5}`} {
				_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{q}).WithSearchParam("params", p))
				require.ErrorContains(t, err, "nprobe", p)
			}
			_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{q}).
				WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"nprobe": 17}`))
			require.ErrorContains(t, err, "nprobe(17) out of range [1, 16]")

			if tc.restart {
				m.restart(t)
				require.InDelta(t, full, recall(nlist), 1e-9)
			}
		})
	}
}

// TestIVFIndexParams: CreateIndex rejects IVF parameters outside the Milvus
// limits before anything is built.
func TestIVFIndexParams(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "ivfparams"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	for _, tc := range []struct {
		idx index.Index
		err string
	}{
		{index.NewIvfFlatIndex(entity.L2, 0), "nlist(0) out of range [1, 65536]"},
		{index.NewIvfSQ8Index(entity.L2, 65537), "nlist(65537) out of range"},
		{index.NewIvfPQIndex(entity.L2, 16, 3, 8), "not a multiple of m(3)"},
		{index.NewIvfPQIndex(entity.L2, 16, 4, 17), "nbits(17) out of range [1, 16]"},
		{index.NewIvfPQIndex(entity.L2, 16, 4, 12), "nbits(12) is not supported"},
	} {
		_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", tc.idx))
		require.ErrorContains(t, err, tc.err)
	}
}

// indexedMovies is a server holding 3,000 flushed movies (uniform random 8-d
// vectors) in a collection named after an index type, with the index built
// on "vector" and loaded, and 20 query vectors.
type indexedMovies struct {
	dir     string
	s       *server
	c       *milvusclient.Client
	coll    string
	live    map[int64]movie
	queries [][]float32
}

// buildIndexedMovies starts a server, writes and flushes the movies, builds
// idx (of type name) and loads the collection, checking that every row was
// indexed and that the index is one file under the type's file key.
func buildIndexedMovies(ctx context.Context, t *testing.T, name string, idx index.Index) *indexedMovies {
	t.Helper()
	m := &indexedMovies{dir: t.TempDir(), coll: strings.ToLower(name), live: map[int64]movie{}}
	m.s = startServer(t, m.dir)
	m.c = m.s.client(t)
	c, coll := m.c, m.coll
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	ms := genMovies(0, 3000, rand.New(rand.NewPCG(5, 5)))
	_, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	for _, mv := range ms {
		m.live[mv.id] = mv
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", idx))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vector"))
	require.NoError(t, err)
	require.EqualValues(t, 3000, desc.IndexedRows)
	require.Equal(t, name, desc.Params()["index_type"])

	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(m.s.storageDir(t), "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}))
	require.Len(t, files, 1)
	require.True(t, strings.HasSuffix(files[0], "/"+name), files[0])

	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	qrng := rand.New(rand.NewPCG(9, 9))
	m.queries = make([][]float32, 20)
	for q := range m.queries {
		m.queries[q] = genMovies(50000+q, 1, qrng)[0].vec
	}
	return m
}

// restart stops the server and starts it again on the same data.
func (m *indexedMovies) restart(t *testing.T) {
	m.s.stop()
	m.s = startServer(t, m.dir)
	m.c = m.s.client(t)
}

// recall is the mean recall@10 against brute force of the queries searched
// with the search params (JSON), each query answering 10 hits.
func (m *indexedMovies) recall(ctx context.Context, t *testing.T, params string) float64 {
	t.Helper()
	hit := 0
	for _, qv := range m.queries {
		rs, err := m.c.Search(ctx, milvusclient.NewSearchOption(m.coll, 10, []entity.Vector{entity.FloatVector(qv)}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", params))
		require.NoError(t, err)
		require.Equal(t, 10, rs[0].ResultCount)
		want := map[int64]bool{}
		for _, id := range bruteForce(m.live, qv, 10) {
			want[id] = true
		}
		for i := range rs[0].ResultCount {
			id, _ := rs[0].IDs.GetAsInt64(i)
			if want[id] {
				hit++
			}
		}
	}
	return float64(hit) / float64(10*len(m.queries))
}
