package e2e

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// Deletes and upserts of rows in a sealed, HNSW-indexed segment are seen by
// the very next Strong read, filtered or not, search or query or count: the
// query node keeps the segment's visibility as a maintained mask and caches
// filtered masks per segment, and neither may outlive a delete.
func TestDeleteUpsertVisibilityOnIndexedSealedSegment(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "visibility"
	const filter = "year < 1960" // one row in seven
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(15, 0))
	live := map[int64]movie{}
	ms := genMovies(0, 2100, rng)
	_, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	for _, m := range ms {
		live[m.id] = m
	}
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 16, 100)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	matching := func() map[int64]movie {
		out := map[int64]movie{}
		for id, m := range live {
			if m.year < 1960 {
				out[id] = m
			}
		}
		return out
	}
	check := func(step string) {
		t.Helper()
		want := matching()
		for range 2 { // the second read may take cached masks: they must be current
			rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("id").
				WithConsistencyLevel(entity.ClStrong))
			require.NoError(t, err)
			var got []int64
			for i := range rs.ResultCount {
				id, _ := rs.GetColumn("id").GetAsInt64(i)
				got = append(got, id)
			}
			slices.Sort(got)
			var wantIDs []int64
			for id := range want {
				wantIDs = append(wantIDs, id)
			}
			slices.Sort(wantIDs)
			require.Equal(t, wantIDs, got, "%s: filtered query", step)
			for _, f := range []string{"", filter} {
				rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(f).WithOutputFields("count(*)").
					WithConsistencyLevel(entity.ClStrong))
				require.NoError(t, err)
				n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
				wantN := len(live)
				if f != "" {
					wantN = len(want)
				}
				require.EqualValues(t, wantN, n, "%s: count(*) filter %q", step, f)
			}
			qv := genMovies(90000, 1, rng)[0].vec
			// 300 of 2100 rows match: the index scans them exactly.
			res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
				WithFilter(filter).WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2"))
			require.NoError(t, err)
			var hits []int64
			for i := range res[0].ResultCount {
				id, _ := res[0].IDs.GetAsInt64(i)
				hits = append(hits, id)
			}
			require.Equal(t, bruteForce(want, qv, 10), hits, "%s: filtered search", step)
			res, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 50, []entity.Vector{entity.FloatVector(qv)}).
				WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2"))
			require.NoError(t, err)
			require.Equal(t, 50, res[0].ResultCount, "%s: search", step)
			for i := range res[0].ResultCount {
				id, _ := res[0].IDs.GetAsInt64(i)
				require.Contains(t, live, id, "%s: search returned a deleted row", step)
			}
		}
	}
	check("loaded")

	var del []int64
	for id, m := range live {
		if m.year < 1960 && id%2 == 0 || id%5 == 0 {
			del = append(del, id)
		}
	}
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", del))
	require.NoError(t, err)
	for _, id := range del {
		delete(live, id)
	}
	check("deleted")

	// Upsert: half the deleted keys come back, some live ones move (new
	// vectors and years), all in a growing segment over the sealed one.
	up := genMovies(0, 2100, rng)
	var again []movie
	for _, m := range up {
		if m.id%4 == 0 || m.id%7 == 1 {
			again = append(again, m)
		}
	}
	_, err = c.Upsert(ctx, insertOption(coll, again))
	require.NoError(t, err)
	for _, m := range again {
		live[m.id] = m
	}
	check("upserted")

	del = del[:0]
	for id := range live {
		if id%3 == 0 {
			del = append(del, id)
		}
	}
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", del))
	require.NoError(t, err)
	for _, id := range del {
		delete(live, id)
	}
	check("deleted again")
}

// A sealed segment's cached filter mask belongs to what the filter compiled
// to: once a field is added under the name of a dynamic key, the same
// filter text reads the new field (null in the old rows) and matches none
// of them.
func TestAddedFieldShadowsDynamicKeyInCachedFilter(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "shadow"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	_, err := c.Insert(ctx, insertOption(coll, genMovies(0, 300, rand.New(rand.NewPCG(1, 5))))) // "color" is a dynamic key
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	indexAndLoad(ctx, t, c, coll, entity.L2)
	count := func() int64 {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`color == "red"`).WithOutputFields("count(*)").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
		return n
	}
	require.EqualValues(t, 100, count())
	require.EqualValues(t, 100, count())
	require.NoError(t, c.AddCollectionField(ctx, milvusclient.NewAddCollectionFieldOption(coll,
		entity.NewField().WithName("color").WithDataType(entity.FieldTypeVarChar).WithMaxLength(8).WithNullable(true))))
	require.Zero(t, count(), "the filter now reads the added field, null in every old row")
}
