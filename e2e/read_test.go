package e2e

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// loadedMovies creates, fills and loads a movies collection of n rows,
// with a FLAT L2 index.
func loadedMovies(t *testing.T, c *milvusclient.Client, coll string, n int) map[int64]movie {
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(7, 7))
	ms := genMovies(0, n, rng)
	_, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	indexAndLoad(ctx, t, c, coll, entity.L2)
	live := map[int64]movie{}
	for _, m := range ms {
		live[m.id] = m
	}
	return live
}

func TestSearchFeatures(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "feat"
	live := loadedMovies(t, c, coll, 600)
	q := live[42].vec

	t.Run("offset", func(t *testing.T) {
		all, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 20, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2"))
		require.NoError(t, err)
		page, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithOffset(10).WithSearchParam("metric_type", "L2"))
		require.NoError(t, err)
		for i := 0; i < 10; i++ {
			a, _ := all[0].IDs.GetAsInt64(10 + i)
			b, _ := page[0].IDs.GetAsInt64(i)
			require.Equal(t, a, b)
		}
		first, _ := all[0].IDs.GetAsInt64(0)
		require.EqualValues(t, 42, first, "a vector is its own nearest neighbour")
	})

	t.Run("many query vectors through a FLAT index", func(t *testing.T) {
		// Nine vectors in one request take the query node's many-query path
		// (flat.SearchBatch); compare every query's hits with a brute-force
		// scan of the live rows matching the filter.
		var qs []entity.Vector
		var raw [][]float32
		for i := range 9 {
			v := live[int64(i*61+5)].vec
			qs = append(qs, entity.FloatVector(v))
			raw = append(raw, v)
		}
		score := map[string]func(a, b []float32) float32{"L2": l2, "IP": dotE2E, "COSINE": func(a, b []float32) float32 {
			return dotE2E(a, b) / float32(math.Sqrt(float64(dotE2E(a, a))*float64(dotE2E(b, b))))
		}}
		for _, metric := range []string{"IP", "COSINE", "L2"} { // L2 last: the later subtests search with it
			reindexFlat(ctx, t, c, coll, "vector", entity.MetricType(metric))
			rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 15, qs).
				WithConsistencyLevel(entity.ClStrong).WithFilter("year >= 2000").
				WithSearchParam("metric_type", metric))
			require.NoError(t, err)
			require.Len(t, rs, len(qs))
			for qi, r := range rs {
				type hit struct {
					id int64
					sc float32
				}
				var want []hit
				for id, m := range live {
					if m.year >= 2000 {
						want = append(want, hit{id, score[metric](raw[qi], m.vec)})
					}
				}
				sort.Slice(want, func(i, j int) bool {
					if want[i].sc != want[j].sc {
						return (want[i].sc < want[j].sc) == (metric == "L2")
					}
					return want[i].id < want[j].id
				})
				require.Equal(t, 15, r.ResultCount, "%s query %d", metric, qi)
				for i := range 15 {
					id, _ := r.IDs.GetAsInt64(i)
					require.InDelta(t, want[i].sc, r.Scores[i], 1e-3, "%s query %d rank %d", metric, qi, i)
					if id != want[i].id {
						require.InDelta(t, want[i].sc, score[metric](raw[qi], live[id].vec), 1e-4, "%s query %d rank %d", metric, qi, i)
					}
				}
			}
		}
	})

	t.Run("filter", func(t *testing.T) {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 50, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithFilter("year >= 2000 and color in ['red', 'blue']").
			WithOutputFields("year", "color"))
		require.NoError(t, err)
		require.Equal(t, 50, rs[0].ResultCount)
		for i := 0; i < rs[0].ResultCount; i++ {
			y, _ := rs[0].GetColumn("year").GetAsInt64(i)
			require.GreaterOrEqual(t, y, int64(2000))
			col, _ := rs[0].GetColumn("color").GetAsString(i)
			require.Contains(t, []string{"red", "blue"}, col)
		}
	})

	t.Run("group by", func(t *testing.T) {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithGroupByField("year").WithGroupSize(2).WithOutputFields("year"))
		require.NoError(t, err)
		require.Equal(t, 6, rs[0].ResultCount, "3 groups of 2")
		years := map[int64]int{}
		for i := 0; i < rs[0].ResultCount; i++ {
			y, _ := rs[0].GetColumn("year").GetAsInt64(i)
			years[y]++
		}
		require.Len(t, years, 3)

		// Offset and limit count groups: page 2 of 1 group is the second group of one search of 2.
		two, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 2, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithGroupByField("year").WithGroupSize(2).WithOutputFields("year"))
		require.NoError(t, err)
		page, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 1, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithGroupByField("year").WithGroupSize(2).WithOffset(1).WithOutputFields("year"))
		require.NoError(t, err)
		require.Equal(t, 2, page[0].ResultCount)
		for i := 0; i < 2; i++ {
			want, _ := two[0].IDs.GetAsInt64(2 + i)
			got, _ := page[0].IDs.GetAsInt64(i)
			require.Equal(t, want, got)
			wy, _ := two[0].GetColumn("year").GetAsInt64(2 + i)
			gy, _ := page[0].GetColumn("year").GetAsInt64(i)
			require.Equal(t, wy, gy)
		}

		// Milvus's refusals: a Double or vector field, and grouping an iterator.
		for field, typ := range map[string]string{"rating": "DOUBLE", "vector": "VECTOR_FLOAT"} {
			_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q)}).
				WithConsistencyLevel(entity.ClStrong).WithGroupByField(field))
			require.ErrorContains(t, err, "unsupported data type "+typ+" for group by operator")
		}
		_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithGroupByField("year").WithSearchParam("iterator", "true"))
		require.ErrorContains(t, err, "Not allowed to do groupBy when doing iteration")
	})

	t.Run("hints inside params", func(t *testing.T) {
		_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"hints": "iterative_filter"}`))
		require.NoError(t, err)
		_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("params", `{"hints": "not_supported_hints"}`))
		require.ErrorContains(t, err, "hints: not_supported_hints not supported")
	})

	t.Run("range", func(t *testing.T) {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 100, []entity.Vector{entity.FloatVector(q)}).
			WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2").
			WithSearchParam("params", `{"radius": 2.0, "range_filter": 0.5}`))
		require.NoError(t, err)
		var want int
		for _, m := range live {
			if d := l2(q, m.vec); d >= 0.5 && d < 2.0 {
				want++
			}
		}
		require.Equal(t, min(want, 100), rs[0].ResultCount)
		for _, sc := range rs[0].Scores {
			require.True(t, sc >= 0.5 && sc < 2.0, "score %v outside [0.5, 2.0)", sc)
		}
	})

	t.Run("search iterator", func(t *testing.T) {
		reindexFlat(ctx, t, c, coll, "vector", entity.COSINE)
		it, err := c.SearchIterator(ctx, milvusclient.NewSearchIteratorOption(coll, entity.FloatVector(q)).
			WithBatchSize(50).WithIteratorLimit(200))
		require.NoError(t, err)
		seen, scores := drainSearchIterator(ctx, t, it)
		require.Len(t, seen, 200)
		require.True(t, sort.SliceIsSorted(scores, func(i, j int) bool { return scores[i] > scores[j] }), "COSINE best first across pages")
	})

	t.Run("query iterator", func(t *testing.T) {
		it, err := c.QueryIterator(ctx, milvusclient.NewQueryIteratorOption(coll).WithBatchSize(64).
			WithFilter("rating > 5").WithOutputFields("rating"))
		require.NoError(t, err)
		n := 0
		for {
			rs, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			n += rs.ResultCount
		}
		want := 0
		for _, m := range live {
			if m.rating > 5 {
				want++
			}
		}
		require.Equal(t, want, n)
	})

	t.Run("query pagination and get", func(t *testing.T) {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithLimit(5).WithOffset(10).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 5, rs.ResultCount)
		first, _ := rs.GetColumn("id").GetAsInt64(0)
		require.EqualValues(t, 10, first)
		// Without a limit the offset is ignored, as in Milvus.
		rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id in [0, 1]").WithOffset(10).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 2, rs.ResultCount)
		got, err := c.Get(ctx, milvusclient.NewQueryOption(coll).WithIDs(columnOfIDs(3, 4, 9999)).WithOutputFields("title"))
		require.NoError(t, err)
		require.Equal(t, 2, got.ResultCount)
	})

	t.Run("count with filter", func(t *testing.T) {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`title like "movie-1%"`).
			WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		want := 0
		for _, m := range live {
			if len(m.title) >= 7 && m.title[:7] == "movie-1" {
				want++
			}
		}
		require.EqualValues(t, want, n)
	})

	t.Run("delete by filter", func(t *testing.T) {
		res, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("year < 1955"))
		require.NoError(t, err)
		want := 0
		for _, m := range live {
			if m.year < 1955 {
				want++
			}
		}
		require.EqualValues(t, want, res.DeleteCount)
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("year < 1955").
			WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		require.Zero(t, n)
	})
}

func columnOfIDs(ids ...int64) column.Column { return column.NewColumnInt64("id", ids) }

// dotE2E is the inner product of a and b.
func dotE2E(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestSearchIteratorIndexed pages a search iterator through an HNSW-indexed
// flushed segment: no key comes back twice and scores never rise across
// pages, whichever path (index or exact) a page takes.
func TestSearchIteratorIndexed(t *testing.T) {
	for _, metric := range []entity.MetricType{entity.COSINE, entity.L2, entity.IP} {
		t.Run(string(metric), func(t *testing.T) {
			s := startServer(t, t.TempDir())
			c := s.client(t)
			ctx := ctxT(t)
			const coll = "iterhnsw"
			live := loadedMovies(t, c, coll, 1000)
			require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
			require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "vector")))
			it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(metric, 8, 32)))
			require.NoError(t, err)
			require.NoError(t, it.Await(ctx))
			waitIndexed(ctx, t, c, coll, "vector", int64(len(live)))
			lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
			require.NoError(t, err)
			require.NoError(t, lt.Await(ctx))
			iter, err := c.SearchIterator(ctx, milvusclient.NewSearchIteratorOption(coll, entity.FloatVector(live[7].vec)).
				WithBatchSize(20).WithIteratorLimit(300).WithSearchParam("metric_type", string(metric)))
			require.NoError(t, err)
			seen, scores := drainSearchIterator(ctx, t, iter)
			require.Len(t, seen, 300)
			higher := metric != entity.L2
			require.True(t, sort.SliceIsSorted(scores, func(i, j int) bool {
				if higher {
					return scores[i] > scores[j]
				}
				return scores[i] < scores[j]
			}), "best first across pages")
		})
	}
}

// drainSearchIterator pages a search iterator to its end, failing on a key
// returned twice; it returns the keys seen and the scores in page order.
func drainSearchIterator(ctx context.Context, t *testing.T, it milvusclient.SearchIterator) (map[int64]bool, []float32) {
	t.Helper()
	seen := map[int64]bool{}
	var scores []float32
	for {
		rs, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if rs.ResultCount == 0 {
			break
		}
		for i := 0; i < rs.ResultCount; i++ {
			id, _ := rs.IDs.GetAsInt64(i)
			require.False(t, seen[id], "id %d returned twice", id)
			seen[id] = true
		}
		scores = append(scores, rs.Scores...)
	}
	return seen, scores
}
