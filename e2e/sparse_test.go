package e2e

import (
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// sparseDoc is one generated row of the sparse collection.
type sparseDoc struct {
	id  int64
	tag int64
	vec map[uint32]float32
}

func sparseSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("sv").WithDataType(entity.FieldTypeSparseVector))
}

// genSparse returns n documents over a vocabulary of 2,000 dimensions with
// Zipf-distributed dimensions (a few are very common, as in learned sparse
// embeddings) and exponential values; every 97th document is empty.
func genSparse(from, n, nnz int, rng *rand.Rand) []sparseDoc {
	z := rand.NewZipf(rng, 1.1, 4, 1999)
	out := make([]sparseDoc, n)
	for i := range out {
		d := sparseDoc{id: int64(from + i), tag: int64((from + i) % 4), vec: map[uint32]float32{}}
		if (from+i)%97 != 0 {
			want := 1 + rng.IntN(2*nnz)
			for len(d.vec) < want {
				d.vec[uint32(z.Uint64())] = float32(rng.ExpFloat64()) + 0.01
			}
		}
		out[i] = d
	}
	return out
}

func embedding(t *testing.T, m map[uint32]float32) entity.SparseEmbedding {
	pos := make([]uint32, 0, len(m))
	vals := make([]float32, 0, len(m))
	for p, v := range m {
		pos = append(pos, p)
		vals = append(vals, v)
	}
	e, err := entity.NewSliceSparseEmbedding(pos, vals)
	require.NoError(t, err)
	return e
}

func insertSparse(t *testing.T, c *milvusclient.Client, coll string, docs []sparseDoc) {
	ids := make([]int64, len(docs))
	tags := make([]int64, len(docs))
	vecs := make([]entity.SparseEmbedding, len(docs))
	for i, d := range docs {
		ids[i], tags[i], vecs[i] = d.id, d.tag, embedding(t, d.vec)
	}
	res, err := c.Insert(ctxT(t), milvusclient.NewColumnBasedInsertOption(coll,
		column.NewColumnInt64("id", ids), column.NewColumnInt64("tag", tags), column.NewColumnSparseVectors("sv", vecs)))
	require.NoError(t, err)
	require.EqualValues(t, len(docs), res.InsertCount)
}

// sparseExact is the reference top k: documents (that keep) with a positive
// inner product with q, best first, ties by id.
func sparseExact(docs map[int64]sparseDoc, q map[uint32]float32, k int, keep func(sparseDoc) bool) ([]int64, map[int64]float64) {
	type hit struct {
		id int64
		s  float64
	}
	var hits []hit
	scores := map[int64]float64{}
	for id, d := range docs {
		if keep != nil && !keep(d) {
			continue
		}
		var s float64
		for p, v := range q {
			s += float64(v) * float64(d.vec[p])
		}
		scores[id] = s
		if s > 0 {
			hits = append(hits, hit{id, s})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].s != hits[j].s {
			return hits[i].s > hits[j].s
		}
		return hits[i].id < hits[j].id
	})
	var ids []int64
	for i := 0; i < len(hits) && i < k; i++ {
		ids = append(ids, hits[i].id)
	}
	return ids, scores
}

// TestSparsePipeline drives sparse vectors through the whole server with
// the Go SDK: insert (a flushed segment and a growing one), query output
// byte-exact, exact search before any index, then each sparse index type
// built over the flushed segment, loaded and searched, with recall against
// brute force: exact (1.0) with no values dropped, ≥ 0.9 with drop ratios.
func TestSparsePipeline(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "sparse"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, sparseSchema(coll))))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.Equal(t, entity.FieldTypeSparseVector, desc.Schema.Fields[2].DataType)

	rng := rand.New(rand.NewPCG(11, 11))
	sealed := genSparse(0, 2000, 20, rng)
	growing := genSparse(2000, 300, 20, rng)
	live := map[int64]sparseDoc{}
	for _, d := range append(append([]sparseDoc{}, sealed...), growing...) {
		live[d.id] = d
	}
	insertSparse(t, c, coll, sealed)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	indexAndLoad(ctx, t, c, coll, entity.IP)
	insertSparse(t, c, coll, growing)

	// Query returns every row byte for byte, the empty ones included.
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id in [0, 1, 97, 1999, 2000, 2001, 2231]").
		WithOutputFields("id", "sv").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 7, rs.ResultCount)
	for i := 0; i < rs.ResultCount; i++ {
		id, err := rs.GetColumn("id").GetAsInt64(i)
		require.NoError(t, err)
		v, err := rs.GetColumn("sv").Get(i)
		require.NoError(t, err)
		got := v.(entity.SparseEmbedding)
		require.Equal(t, embedding(t, live[id].vec).Serialize(), got.Serialize(), "row %d", id)
	}

	qrng := rand.New(rand.NewPCG(13, 13))
	queries := genSparse(1, 20, 8, qrng)
	recall := func(params string) float64 {
		hit, total := 0, 0
		for _, q := range queries {
			opt := milvusclient.NewSearchOption(coll, 10, []entity.Vector{embedding(t, q.vec)}).
				WithANNSField("sv").WithConsistencyLevel(entity.ClStrong)
			if params != "" {
				opt = opt.WithSearchParam("params", params)
			}
			rs, err := c.Search(ctx, opt)
			require.NoError(t, err)
			want, scores := sparseExact(live, q.vec, 10, nil)
			set := map[int64]bool{}
			for _, id := range want {
				set[id] = true
			}
			for i := 0; i < rs[0].ResultCount; i++ {
				id, _ := rs[0].IDs.GetAsInt64(i)
				require.InDelta(t, scores[id], float64(rs[0].Scores[i]), 1e-3*math.Max(1, scores[id]), "id %d", id)
				if set[id] {
					hit++
				}
			}
			total += len(want)
		}
		return float64(hit) / float64(total)
	}
	require.Equal(t, 1.0, recall(""), "SPARSE_INVERTED_INDEX that drops nothing is exact")

	// A filter restricts the exact search too.
	q := queries[0]
	res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{embedding(t, q.vec)}).
		WithFilter("tag == 1").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	want, _ := sparseExact(live, q.vec, 10, func(d sparseDoc) bool { return d.tag == 1 })
	var got []int64
	for i := 0; i < res[0].ResultCount; i++ {
		id, _ := res[0].IDs.GetAsInt64(i)
		got = append(got, id)
	}
	require.Equal(t, want, got)

	for _, tc := range []struct {
		idx        index.Index
		typ        string
		dropSearch float64
		min        float64
	}{
		{index.NewSparseInvertedIndex(entity.IP, 0), "SPARSE_INVERTED_INDEX", 0, 1},
		{index.NewSparseWANDIndex(entity.IP, 0), "SPARSE_WAND", 0, 1},
		{index.NewSparseWANDIndex(entity.IP, 0.2), "SPARSE_WAND", 0.2, 0.9},
		{index.NewAutoIndex(entity.IP), "SPARSE_INVERTED_INDEX", 0.3, 0.9},
	} {
		name := fmt.Sprintf("%s/%v", tc.typ, tc.idx.Params())
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)), name)
		_ = c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "sv"))
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "sv", tc.idx))
		require.NoError(t, err, name)
		require.NoError(t, it.Await(ctx), name)
		d, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "sv"))
		require.NoError(t, err)
		require.Equal(t, "IP", d.Params()["metric_type"])

		// The index file is keyed by the type built (AUTOINDEX builds
		// SPARSE_INVERTED_INDEX) and holds the flushed segment's rows.
		var files []string
		require.NoError(t, filepath.WalkDir(filepath.Join(s.storageDir(t), "files", "index_files"), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, "/"+tc.typ) {
				files = append(files, p)
			}
			return err
		}))
		require.NotEmpty(t, files, name)

		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		r := recall(fmt.Sprintf(`{"drop_ratio_search": %v}`, tc.dropSearch))
		// Without refinement, ignoring 80% of the query's values loses
		// recall: the flushed segment is searched through its index.
		pruned := recall(`{"drop_ratio_search": 0.8, "refine_factor": 1}`)
		require.Less(t, pruned, 1.0, name)
		t.Logf("%s drop_ratio_search %v: recall@10 %.3f (%.3f with 0.8 and no refinement)", name, tc.dropSearch, r, pruned)
		require.GreaterOrEqual(t, r, tc.min, name)
	}

	// Upsert replaces a row of the indexed segment; query returns the new
	// vector byte for byte and search sees it.
	up := sparseDoc{id: 5, tag: 1, vec: map[uint32]float32{1: 0.5, 1999: 3, 4000: 2}}
	ur, err := c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", []int64{up.id}),
		column.NewColumnInt64("tag", []int64{up.tag}), column.NewColumnSparseVectors("sv", []entity.SparseEmbedding{embedding(t, up.vec)})))
	require.NoError(t, err)
	require.EqualValues(t, 1, ur.UpsertCount)
	live[up.id] = up
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id == 5").WithOutputFields("sv").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	v, err := rs.GetColumn("sv").Get(0)
	require.NoError(t, err)
	require.Equal(t, embedding(t, up.vec).Serialize(), v.(entity.SparseEmbedding).Serialize())
	top, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 1, []entity.Vector{embedding(t, map[uint32]float32{4000: 1})}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1, top[0].ResultCount)
	id, _ := top[0].IDs.GetAsInt64(0)
	require.EqualValues(t, 5, id)
	require.InDelta(t, 2.0, float64(top[0].Scores[0]), 1e-6)

	// After a restart the index files are loaded again and serve the same
	// results.
	pruned := recall(`{"drop_ratio_search": 0.8, "refine_factor": 1}`)
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	require.InDelta(t, pruned, recall(`{"drop_ratio_search": 0.8, "refine_factor": 1}`), 1e-9)
	require.Equal(t, 1.0, recall(""))
}

// TestSparseBadInput: invalid sparse rows, index parameters and search
// requests are refused with errors that name the problem.
func TestSparseBadInput(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "sparsebad"
	err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("withdim", entity.NewSchema().WithName("withdim").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("sv").WithDataType(entity.FieldTypeSparseVector).WithDim(8))))
	require.ErrorContains(t, err, "dim should not be specified")
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, sparseSchema(coll))))

	raw := func(pairs ...any) entity.SparseEmbedding {
		var b []byte
		for i := 0; i < len(pairs); i += 2 {
			b = appendPair(b, pairs[i].(uint32), pairs[i+1].(float32))
		}
		e, err := entity.DeserializeSliceSparseEmbedding(b)
		require.NoError(t, err)
		return e
	}
	for _, tc := range []struct {
		row entity.SparseEmbedding
		err string
	}{
		{raw(uint32(5), float32(1), uint32(3), float32(1)), "unsorted or same indices"},
		{raw(uint32(5), float32(1), uint32(5), float32(2)), "unsorted or same indices"},
		{raw(uint32(math.MaxUint32), float32(1)), "less than 2^32-1"},
		{raw(uint32(1), float32(-1)), "negative value"},
		{raw(uint32(1), float32(math.NaN())), "NaN or Inf"},
	} {
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll, column.NewColumnInt64("id", []int64{1}),
			column.NewColumnInt64("tag", []int64{1}), column.NewColumnSparseVectors("sv", []entity.SparseEmbedding{tc.row})))
		require.ErrorContains(t, err, tc.err)
		require.ErrorContains(t, err, `"sv"`)
	}
	insertSparse(t, c, coll, genSparse(0, 50, 5, rand.New(rand.NewPCG(1, 2))))

	for _, tc := range []struct {
		idx index.Index
		err string
	}{
		{index.NewSparseInvertedIndex(entity.L2, 0), "only IP"},
		{index.NewSparseWANDIndex(entity.COSINE, 0), "only IP"},
		{index.NewSparseInvertedIndex(entity.IP, 1.3), "invalid drop_ratio_build: 1.3, must be in range [0, 1)"},
		{index.NewSparseWANDIndex(entity.IP, -0.1), "invalid drop_ratio_build"},
		{index.NewHNSWIndex(entity.IP, 16, 64), "invalid index type: HNSW"},
		{index.NewGenericIndex("sv", map[string]string{
			"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "IP",
			"inverted_index_algo": "daat_wand",
		}), "sparse inverted index algo daat_wand not found or not supported"},
	} {
		_, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "sv", tc.idx))
		require.ErrorContains(t, err, tc.err)
	}

	indexAndLoad(ctx, t, c, coll, entity.IP)
	q := []entity.Vector{raw(uint32(1), float32(1))}
	for _, tc := range []struct {
		opt milvusclient.SearchOption
		err string
	}{
		{milvusclient.NewSearchOption(coll, 10, q).WithSearchParam("metric_type", "L2"), "not supported for sparse float vectors, supported: [IP]"},
		{milvusclient.NewSearchOption(coll, 10, q).WithSearchParam("params", `{"drop_ratio_search": 1}`), "drop_ratio_search"},
		{milvusclient.NewSearchOption(coll, 10, q).WithSearchParam("params", `{"drop_ratio_search": -0.5}`), "drop_ratio_search"},
		{milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector{1, 2}}), "do not match the sparse"},
		{milvusclient.NewSearchOption(coll, 10, []entity.Vector{raw(uint32(4), float32(1), uint32(2), float32(1))}), "unsorted"},
	} {
		_, err := c.Search(ctx, tc.opt)
		require.ErrorContains(t, err, tc.err)
	}
	// A query that shares no dimension with any row has no hits.
	rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{raw(uint32(100000), float32(1))}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 0, rs[0].ResultCount)
}

func appendPair(b []byte, idx uint32, v float32) []byte {
	bits := math.Float32bits(v)
	return append(b, byte(idx), byte(idx>>8), byte(idx>>16), byte(idx>>24),
		byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24))
}

// TestSparseCompaction: segments with sparse rows survive a mix compaction
// (deleted rows dropped, the rest rewritten byte for byte) and the merged
// segment gets its own sparse index, which serves exact results.
func TestSparseCompaction(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "sparsecompact"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, sparseSchema(coll))))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "sv", index.NewSparseWANDIndex(entity.IP, 0)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	rng := rand.New(rand.NewPCG(17, 17))
	live := map[int64]sparseDoc{}
	for b := 0; b < 3; b++ {
		batch := genSparse(b*400, 400, 15, rng)
		insertSparse(t, c, coll, batch)
		for _, d := range batch {
			live[d.id] = d
		}
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id % 5 == 0"))
	require.NoError(t, err)
	for id := range live {
		if id%5 == 0 {
			delete(live, id)
		}
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	waitCompaction(t, ctx, svc, coll)

	// The merged segment is indexed again.
	require.Eventually(t, func() bool {
		d, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "sv"))
		return err == nil && d.IndexedRows == int64(len(live)) && d.PendingIndexRows == 0
	}, 30*time.Second, 50*time.Millisecond)

	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithOutputFields("id", "sv").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, len(live), rs.ResultCount)
	for i := 0; i < rs.ResultCount; i++ {
		id, _ := rs.GetColumn("id").GetAsInt64(i)
		v, err := rs.GetColumn("sv").Get(i)
		require.NoError(t, err)
		require.Equal(t, embedding(t, live[id].vec).Serialize(), v.(entity.SparseEmbedding).Serialize(), "row %d", id)
	}
	for _, q := range genSparse(1, 10, 6, rand.New(rand.NewPCG(3, 4))) {
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{embedding(t, q.vec)}).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		want, _ := sparseExact(live, q.vec, 10, nil)
		var got []int64
		for i := 0; i < res[0].ResultCount; i++ {
			id, _ := res[0].IDs.GetAsInt64(i)
			got = append(got, id)
		}
		require.Equal(t, want, got)
	}
}

// TestSparseSearchByPK searches a sparse field by primary key through raw
// gRPC: the stored vectors of the keys (one in a flushed segment, one still
// growing) are the queries, and the hits match brute force over every row.
func TestSparseSearchByPK(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "sparsebypk"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, sparseSchema(coll))))
	rng := rand.New(rand.NewPCG(5, 6))
	docs := genSparse(0, 300, 6, rng)
	insertSparse(t, c, coll, docs[:200])
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	insertSparse(t, c, coll, docs[200:])
	indexAndLoad(ctx, t, c, coll, entity.IP)
	byID := map[int64]sparseDoc{}
	for _, d := range docs {
		byID[d.id] = d
	}

	search := func(keys ...int64) (*milvuspb.SearchResults, error) {
		return c.GetService().Search(ctx, &milvuspb.SearchRequest{
			CollectionName: coll,
			SearchInput:    &milvuspb.SearchRequest_Ids{Ids: &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: keys}}}},
			SearchParams: []*commonpb.KeyValuePair{
				{Key: "topk", Value: "5"},
				{Key: "anns_field", Value: "sv"},
				{Key: "metric_type", Value: "IP"},
				{Key: "params", Value: "{}"},
			},
			ConsistencyLevel: commonpb.ConsistencyLevel_Strong,
		})
	}
	keys := []int64{7, 250}
	sr, err := search(keys...)
	require.NoError(t, err)
	require.Zero(t, sr.GetStatus().GetCode(), sr.GetStatus().GetReason())
	res := sr.GetResults()
	require.EqualValues(t, len(keys), res.GetNumQueries())
	got, scores := res.GetIds().GetIntId().GetData(), res.GetScores()
	off := 0
	for q, key := range keys {
		want, exact := sparseExact(byID, byID[key].vec, 5, nil)
		require.NotEmpty(t, want)
		require.EqualValues(t, len(want), res.GetTopks()[q], "query %d: every row with a positive score, up to topk", key)
		hits := got[off : off+len(want)]
		require.Contains(t, hits, key, "a row is among its own nearest neighbours")
		for i, id := range hits {
			score := float64(scores[off+i])
			require.InDelta(t, exact[want[i]], score, 1e-3*math.Max(1, score), "query %d rank %d", key, i)
			require.InDelta(t, exact[id], score, 1e-3*math.Max(1, score), "query %d: hit %d's score", key, id)
		}
		off += len(want)
	}

	// A key that is not stored is a clear error.
	sr, err = search(7, 100000)
	require.NoError(t, err)
	require.NotZero(t, sr.GetStatus().GetCode())
	require.Contains(t, sr.GetStatus().GetReason(), "100000")
}
