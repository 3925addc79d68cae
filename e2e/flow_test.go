package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

const dim = 8

func moviesSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("title").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("year").WithDataType(entity.FieldTypeInt32)).
		WithField(entity.NewField().WithName("rating").WithDataType(entity.FieldTypeDouble)).
		WithField(entity.NewField().WithName("tags").WithDataType(entity.FieldTypeArray).
			WithElementType(entity.FieldTypeVarChar).WithMaxCapacity(8).WithMaxLength(16)).
		WithField(entity.NewField().WithName("info").WithDataType(entity.FieldTypeJSON)).
		WithField(entity.NewField().WithName("vector").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
}

// movie is one generated row.
type movie struct {
	id     int64
	title  string
	year   int32
	rating float64
	tags   []string
	info   []byte
	color  string
	vec    []float32
}

func genMovies(from, n int, rng *rand.Rand) []movie {
	out := make([]movie, n)
	colors := []string{"red", "green", "blue"}
	for i := range out {
		id := int64(from + i)
		v := make([]float32, dim)
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
		out[i] = movie{
			id: id, title: fmt.Sprintf("movie-%d", id), year: int32(1950 + id%70),
			rating: float64(id%100) / 10, tags: []string{"t" + fmt.Sprint(id%3)},
			info: []byte(fmt.Sprintf(`{"budget":%d}`, id*10)), color: colors[id%3], vec: v,
		}
	}
	return out
}

// writeOption is an option usable for both Insert and Upsert.
type writeOption interface {
	milvusclient.InsertOption
	milvusclient.UpsertOption
}

func insertOption(coll string, ms []movie) writeOption {
	ids := make([]int64, len(ms))
	titles := make([]string, len(ms))
	years := make([]int32, len(ms))
	ratings := make([]float64, len(ms))
	tags := make([][]string, len(ms))
	infos := make([][]byte, len(ms))
	colors := make([]string, len(ms))
	vecs := make([][]float32, len(ms))
	for i, m := range ms {
		ids[i], titles[i], years[i], ratings[i], tags[i], infos[i], colors[i], vecs[i] =
			m.id, m.title, m.year, m.rating, m.tags, m.info, m.color, m.vec
	}
	return milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("id", ids).WithVarcharColumn("title", titles).WithInt32Column("year", years).
		WithColumns(column.NewColumnDouble("rating", ratings), column.NewColumnVarCharArray("tags", tags),
			column.NewColumnJSONBytes("info", infos), column.NewColumnVarChar("color", colors)).
		WithFloatVectorColumn("vector", dim, vecs)
}

func l2(a, b []float32) float32 {
	var s float32
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// bruteForce returns the ids of the k nearest live movies by L2.
func bruteForce(live map[int64]movie, q []float32, k int) []int64 {
	type hit struct {
		id int64
		d  float32
	}
	var hits []hit
	for id, m := range live {
		hits = append(hits, hit{id, l2(q, m.vec)})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].d != hits[j].d {
			return hits[i].d < hits[j].d
		}
		return hits[i].id < hits[j].id
	})
	var out []int64
	for i := 0; i < k && i < len(hits); i++ {
		out = append(out, hits[i].id)
	}
	return out
}

func TestWriteReadFlushRestart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))

	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.True(t, desc.Schema.EnableDynamicField)
	require.Len(t, desc.Schema.Fields, 7, "system fields and $meta are hidden")
	require.Equal(t, fmt.Sprint(dim), desc.Schema.Fields[6].TypeParams["dim"])

	rng := rand.New(rand.NewPCG(1, 2))
	live := map[int64]movie{}
	all := genMovies(0, 2000, rng)
	for i := 0; i < len(all); i += 500 {
		res, err := c.Insert(ctx, insertOption(coll, all[i:i+500]))
		require.NoError(t, err)
		require.EqualValues(t, 500, res.InsertCount)
	}
	for _, m := range all {
		live[m.id] = m
	}

	task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	checkCount := func(want int) {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		require.EqualValues(t, want, n)
	}
	checkSearch := func() {
		t.Helper()
		for q := 0; q < 5; q++ {
			qv := genMovies(100000+q, 1, rng)[0].vec
			rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector(qv)}).
				WithConsistencyLevel(entity.ClStrong).WithOutputFields("title", "color"))
			require.NoError(t, err)
			require.Len(t, rs, 1)
			want := bruteForce(live, qv, 10)
			var got []int64
			for i := 0; i < rs[0].ResultCount; i++ {
				id, err := rs[0].IDs.GetAsInt64(i)
				require.NoError(t, err)
				got = append(got, id)
				title, err := rs[0].GetColumn("title").GetAsString(i)
				require.NoError(t, err)
				require.Equal(t, live[id].title, title)
				require.InDelta(t, l2(qv, live[id].vec), rs[0].Scores[i], 1e-4)
			}
			require.Equal(t, want, got)
		}
	}
	checkCount(2000)
	checkSearch()

	// Query with a filter, output fields incl. a dynamic key.
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id < 10 and color == 'red'").
		WithOutputFields("id", "title", "color", "tags").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 4, rs.ResultCount) // ids 0,3,6,9
	for i := 0; i < rs.ResultCount; i++ {
		id, _ := rs.GetColumn("id").GetAsInt64(i)
		require.EqualValues(t, 0, id%3)
		color, err := rs.GetColumn("color").GetAsString(i)
		require.NoError(t, err)
		require.Equal(t, "red", color)
	}

	// Delete by ids, then upsert: ids 0..99 deleted, 100..199 replaced.
	var delIDs []int64
	for i := int64(0); i < 100; i++ {
		delIDs = append(delIDs, i)
		delete(live, i)
	}
	dres, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", delIDs))
	require.NoError(t, err)
	require.EqualValues(t, 100, dres.DeleteCount)
	up := genMovies(100, 100, rng)
	for i := range up {
		up[i].title = fmt.Sprintf("upserted-%d", up[i].id)
		live[up[i].id] = up[i]
	}
	ures, err := c.Upsert(ctx, insertOption(coll, up))
	require.NoError(t, err)
	require.EqualValues(t, 100, ures.UpsertCount)
	checkCount(1900)
	checkSearch()

	// Flush: segments are sealed and synced, and reads stay the same.
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	checkCount(1900)
	checkSearch()
	stats, err := c.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption(coll))
	require.NoError(t, err)
	require.NotEmpty(t, stats["row_count"])

	// Insert after the flush, then restart: everything acknowledged is back.
	more := genMovies(5000, 300, rng)
	_, err = c.Insert(ctx, insertOption(coll, more))
	require.NoError(t, err)
	for _, m := range more {
		live[m.id] = m
	}
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id in [5000, 5001, 150]"))
	require.NoError(t, err)
	delete(live, 5000)
	delete(live, 5001)
	delete(live, 150)
	checkCount(len(live))

	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	// The reload goes on in the background: Loading (never NotLoad) until
	// the sealed segments are back, then Loaded.
	require.Eventually(t, func() bool {
		state, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		require.NoError(t, err)
		require.Contains(t, []entity.LoadStateCode{entity.LoadStateLoading, entity.LoadStateLoaded}, state.State,
			"a loaded collection is loaded again after restart")
		return state.State == entity.LoadStateLoaded
	}, 60*time.Second, 20*time.Millisecond)
	checkCount(len(live))
	checkSearch()
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id in [150, 151]").
		WithOutputFields("title").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 1, rs.ResultCount)
	title, err := rs.GetColumn("title").GetAsString(0)
	require.NoError(t, err)
	require.Equal(t, "upserted-151", title)
}

func TestVarCharPKAndPartitions(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "docs"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(2)))
	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p1")))
	has, err := c.HasPartition(ctx, milvusclient.NewHasPartitionOption(coll, "p1"))
	require.NoError(t, err)
	require.True(t, has)
	parts, err := c.ListPartitions(ctx, milvusclient.NewListPartitionOption(coll))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"_default", "p1"}, parts)
	// As in Milvus, creating an existing partition and dropping a missing one
	// succeed and change nothing (pymilvus and Node apps rely on it).
	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p1")))
	require.NoError(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "nopart")))
	parts, err = c.ListPartitions(ctx, milvusclient.NewListPartitionOption(coll))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"_default", "p1"}, parts)

	ins := func(part string, keys ...string) {
		vecs := make([][]float32, len(keys))
		for i := range vecs {
			vecs[i] = []float32{float32(i), 1, 0, 0}
		}
		opt := milvusclient.NewColumnBasedInsertOption(coll).WithVarcharColumn("pk", keys).WithFloatVectorColumn("v", 4, vecs)
		if part != "" {
			opt = opt.WithPartition(part)
		}
		_, err := c.Insert(ctx, opt)
		require.NoError(t, err)
	}
	ins("", "a", "b", "c")
	ins("p1", "x", "y")
	indexAndLoad(ctx, t, c, coll, entity.COSINE)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(`pk in ["a", "x", "zz"]`).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 2, rs.ResultCount)
	rs, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithPartitions("p1").WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
	require.EqualValues(t, 2, n)

	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithStringIDs("pk", []string{"a", "y"}))
	require.NoError(t, err)
	res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector{0, 1, 0, 0}}).
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	var got []string
	for i := 0; i < res[0].ResultCount; i++ {
		id, _ := res[0].IDs.GetAsString(i)
		got = append(got, id)
	}
	require.ElementsMatch(t, []string{"b", "c", "x"}, got)
	for i := 1; i < len(res[0].Scores); i++ {
		require.GreaterOrEqual(t, res[0].Scores[i-1], res[0].Scores[i], "COSINE scores best first")
	}

	// Dropping a loaded partition is refused; after release it works.
	require.Error(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "p1")))
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	require.NoError(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "p1")))
	require.NoError(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "p1")), "dropping it again is a no-op")
	require.Error(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption(coll, "_default")))
	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption(coll)))
	has, err = c.HasCollection(ctx, milvusclient.NewHasCollectionOption(coll))
	require.NoError(t, err)
	require.False(t, has)
}

func TestAutoIDAndNaN(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("quick", 4)))
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("quick").
		WithFloatVectorColumn("vector", 4, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}))
	require.NoError(t, err)
	require.Equal(t, 2, res.IDs.Len())
	a, _ := res.IDs.GetAsInt64(0)
	b, _ := res.IDs.GetAsInt64(1)
	require.NotEqual(t, a, b)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("quick").
		WithFloatVectorColumn("vector", 4, [][]float32{{float32(math.NaN()), 0, 0, 0}}))
	require.ErrorContains(t, err, "NaN")
	rs, err := c.Query(ctx, milvusclient.NewQueryOption("quick").WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, _ := rs.GetColumn("count(*)").GetAsInt64(0)
	require.EqualValues(t, 2, n, "the rejected insert changed nothing")
}
