package e2e

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// textDocs are the three texts rows cycle through (row i holds textDocs[i%3]).
var textDocs = []string{
	"The quick brown fox jumps", // 0: quick brown adjacent
	"Brown, quick: a lazy dog",  // 1: brown quick reversed
	"a fox and a dog",           // 2: fox … dog two apart
}

// TestTextMatch drives text_match and phrase_match through the Go SDK on a
// collection with sealed and growing rows: query, search, count(*), the
// query iterator, templates, combined filters, delete by text_match, the
// errors Milvus gives, and the same answers after a restart.
func TestTextMatch(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "texts"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256).
			WithEnableAnalyzer(true).WithAnalyzerParams(map[string]any{"type": "standard"}).WithEnableMatch(true)).
		WithField(entity.NewField().WithName("plain").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))

	bad := entity.NewSchema().WithName("nomatch").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("text").WithDataType(entity.FieldTypeVarChar).WithMaxLength(256).WithEnableMatch(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	err := c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("nomatch", bad))
	require.ErrorContains(t, err, "field text is set to enable match or bm25 function but not enable analyzer")

	insert := func(lo, hi int) {
		t.Helper()
		var ids []int64
		var texts []string
		var vecs [][]float32
		for i := lo; i < hi; i++ {
			ids = append(ids, int64(i))
			texts = append(texts, textDocs[i%3])
			vecs = append(vecs, []float32{float32(i), 0})
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithVarcharColumn("text", texts).WithVarcharColumn("plain", texts).WithFloatVectorColumn("v", 2, vecs))
		require.NoError(t, err)
	}
	insert(0, 150)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "v", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	insert(150, 300) // growing rows

	deleted := map[int64]bool{}
	want := func(keep func(i int) bool) []int64 {
		out := []int64{}
		for i := range 300 {
			if keep(i) && !deleted[int64(i)] {
				out = append(out, int64(i))
			}
		}
		return out
	}
	ids := func(col column.Column, n int) []int64 {
		out := []int64{}
		for i := range n {
			id, err := col.GetAsInt64(i)
			require.NoError(t, err)
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	query := func(filter string, tmpl map[string]any) []int64 {
		t.Helper()
		opt := milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("id").WithConsistencyLevel(entity.ClStrong)
		for k, v := range tmpl {
			opt = opt.WithTemplateParam(k, v)
		}
		rs, err := c.Query(ctx, opt)
		require.NoError(t, err, filter)
		return ids(rs.GetColumn("id"), rs.ResultCount)
	}
	count := func(filter string) int64 {
		t.Helper()
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("count(*)").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, filter)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		return n
	}
	mod := func(rs ...int) func(int) bool { return func(i int) bool { return slices.Contains(rs, i%3) } }

	check := func() {
		t.Helper()
		require.Equal(t, want(mod(0, 2)), query("text_match(text, 'FOX')", nil))
		require.Equal(t, want(mod(0, 1, 2)), query("TEXT_MATCH(text, 'fox lazy')", nil))
		require.Equal(t, want(mod(1)), query("text_match(text, 'quick dog', minimum_should_match=2)", nil))
		require.Equal(t, want(mod(2)), query("text_match(text, {q})", map[string]any{"q": "and"}))
		require.Equal(t, want(mod(0)), query("phrase_match(text, 'quick brown')", nil))
		require.Equal(t, want(mod(0)), query("PHRASE_MATCH(text, 'quick brown', 1)", nil))
		require.Equal(t, want(mod(0, 1)), query("phrase_match(text, 'quick brown', 2)", nil))
		require.Equal(t, want(mod(2)), query("phrase_match(text, {p}, 2)", map[string]any{"p": "fox dog"}))
		require.Empty(t, query("phrase_match(text, 'fox dog', 1)", nil))
		require.Equal(t, want(func(i int) bool { return i%3 == 2 && i >= 140 && i < 160 }),
			query("text_match(text, 'fox') and id >= 140 and id < 160 and not phrase_match(text, 'brown fox')", nil))
		require.Equal(t, want(func(i int) bool { return i%3 == 0 || i < 3 }),
			query("phrase_match(text, 'brown fox jumps') or id in [0, 1, 2]", nil))
		require.Equal(t, int64(len(want(mod(1)))), count("text_match(text, 'lazy')"))
		require.Equal(t, int64(len(want(func(i int) bool { return i%3 != 1 }))), count("not text_match(text, 'lazy')"))

		// search: the nearest rows to (299, 0) among those holding "fox" and "dog"
		res, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 4, []entity.Vector{entity.FloatVector{299, 0}}).
			WithFilter("text_match(text, 'fox dog', minimum_should_match=2)").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		hits := want(mod(2))
		slices.Reverse(hits)
		require.Equal(t, hits[:4], func() []int64 { v := ids(res[0].IDs, res[0].ResultCount); slices.Reverse(v); return v }())

		// the query iterator pages through the same rows
		it, err := c.QueryIterator(ctx, milvusclient.NewQueryIteratorOption(coll).WithFilter("phrase_match(text, 'lazy dog')").
			WithBatchSize(17).WithOutputFields("id").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		var got []int64
		for {
			rs, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			got = append(got, ids(rs.GetColumn("id"), rs.ResultCount)...)
		}
		slices.Sort(got)
		require.Equal(t, want(mod(1)), got)
	}
	check()

	// delete by text_match, on sealed and growing rows
	dr, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("text_match(text, 'lazy') and (id < 30 or id >= 270)"))
	require.NoError(t, err)
	for i := range 300 {
		if i%3 == 1 && (i < 30 || i >= 270) {
			deleted[int64(i)] = true
		}
	}
	require.Equal(t, int64(len(deleted)), dr.DeleteCount)
	check()

	// Milvus's errors
	for filter, msg := range map[string]string{
		"text_match(plain, 'fox')":                        `field "plain" does not enable match`,
		"phrase_match(id, 'fox')":                         "phrase match operation on non-string is unsupported",
		"phrase_match(text, 'fox', -1)":                   `"slop" should not be a negative interger`,
		"text_match(text, 'fox', minimum_should_match=0)": "minimum_should_match should be >= 1",
	} {
		_, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("id"))
		require.ErrorContains(t, err, msg, filter)
	}

	// after a restart the rows are in sealed segments again and the
	// indexes are rebuilt on first use
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check()
}
