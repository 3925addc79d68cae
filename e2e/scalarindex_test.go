package e2e

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

func scalarSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt64).WithNullable(true)).
		WithField(entity.NewField().WithName("score").WithDataType(entity.FieldTypeDouble)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16).WithNullable(true)).
		WithField(entity.NewField().WithName("flag").WithDataType(entity.FieldTypeBool)).
		WithField(entity.NewField().WithName("grp").WithDataType(entity.FieldTypeInt32)).
		WithField(entity.NewField().WithName("labels").WithDataType(entity.FieldTypeArray).
			WithElementType(entity.FieldTypeInt64).WithMaxCapacity(4)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
}

var scalarTags = []string{"a", "ab", "abc", "b", "ba", "c", "x%", ""}

// insertScalarRows inserts rows [from, from+n) with nulls in age and tag.
func insertScalarRows(t *testing.T, c *milvusclient.Client, coll string, from, n int) {
	t.Helper()
	ctx := ctxT(t)
	ids := make([]int64, n)
	var ages []int64
	var tags []string
	ageValid, tagValid := make([]bool, n), make([]bool, n)
	scores, flags, grps := make([]float64, n), make([]bool, n), make([]int32, n)
	vecs := make([][]float32, n)
	labels := make([][]int64, n)
	for i := range n {
		id := int64(from + i)
		ids[i] = id
		if ageValid[i] = id%7 != 0; ageValid[i] {
			ages = append(ages, id%50)
		}
		if tagValid[i] = id%11 != 0; tagValid[i] {
			tags = append(tags, scalarTags[id%int64(len(scalarTags))]+scalarTags[(id/8)%int64(len(scalarTags))])
		}
		scores[i] = float64(id%40) / 4
		flags[i] = id%3 == 0
		grps[i] = int32(id % 5)
		vecs[i] = []float32{float32(id % 13), float32(id % 17), 1, float32(id % 3)}
		labels[i] = []int64{}
		for j := range id % 4 {
			labels[i] = append(labels[i], (id*7+j*3)%10)
		}
	}
	age, err := column.NewNullableColumnInt64("age", ages, ageValid)
	require.NoError(t, err)
	tag, err := column.NewNullableColumnVarChar("tag", tags, tagValid)
	require.NoError(t, err)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
		WithColumns(age, tag, column.NewColumnDouble("score", scores), column.NewColumnInt64Array("labels", labels)).WithBoolColumn("flag", flags).
		WithInt32Column("grp", grps).WithFloatVectorColumn("vec", 4, vecs))
	require.NoError(t, err)
}

// randomScalarFilter writes a filter over the indexed fields.
func randomScalarFilter(r *rand.Rand, depth int) string {
	if depth > 0 && r.IntN(3) == 0 {
		a, b := randomScalarFilter(r, depth-1), randomScalarFilter(r, depth-1)
		return []string{"(" + a + " and " + b + ")", "(" + a + " or " + b + ")", "not (" + a + ")"}[r.IntN(3)]
	}
	op := []string{"==", "!=", "<", "<=", ">", ">="}[r.IntN(6)]
	tag := func() string { return fmt.Sprintf("%q", scalarTags[r.IntN(len(scalarTags))]) }
	switch r.IntN(10) {
	case 8:
		fn := []string{"array_contains_any", "array_contains_all"}[r.IntN(2)]
		return fmt.Sprintf("%s(labels, [%d, %d])", fn, r.IntN(10), r.IntN(10))
	case 0:
		return fmt.Sprintf("age %s %d", op, r.IntN(60)-5)
	case 1:
		return fmt.Sprintf("score %s %g", op, float64(r.IntN(45))/4)
	case 2:
		return "tag " + op + " " + tag()
	case 3:
		return fmt.Sprintf("age in [%d, %d, %d]", r.IntN(50), r.IntN(50), r.IntN(50))
	case 4:
		return "tag not in [" + tag() + ", " + tag() + "]"
	case 5:
		return fmt.Sprintf(`tag like "%s%%"`, strings.ReplaceAll(scalarTags[r.IntN(len(scalarTags))], "%", `\%`))
	case 6:
		return fmt.Sprintf("%d <= grp < %d", r.IntN(5), r.IntN(6))
	case 7:
		return []string{"flag == true", "flag != true", "age is null", "tag is not null"}[r.IntN(4)]
	}
	return fmt.Sprintf("grp %s %d", op, r.IntN(6))
}

// TestScalarIndexesMatchScan builds INVERTED, STL_SORT, Trie and BITMAP
// indexes over flushed segments, then checks that filtered queries, counts
// and searches on the indexed collection return exactly what the same data
// returns without indexes, with nulls, deletes and growing rows.
func TestScalarIndexesMatchScan(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const plain, indexed = "scan_plain", "scan_indexed"
	for _, coll := range []string{plain, indexed} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, scalarSchema(coll))))
		insertScalarRows(t, c, coll, 0, 1500)
		insertScalarRows(t, c, coll, 1500, 1500)
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		var dels []int64
		for id := int64(4); id < 3000; id += 9 {
			dels = append(dels, id)
		}
		_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", dels))
		require.NoError(t, err)
	}
	for field, idx := range map[string]index.Index{
		"age": index.NewInvertedIndex(), "score": index.NewSortedIndex(), "tag": index.NewTrieIndex(),
		"grp": index.NewBitmapIndex(), "flag": index.NewBitmapIndex(), "labels": index.NewInvertedIndex(),
	} {
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(indexed, field, idx))
		require.NoError(t, err, field)
		require.NoError(t, it.Await(ctx), field)
		desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(indexed, field))
		require.NoError(t, err)
		require.EqualValues(t, 3000, desc.IndexedRows, field)
		require.Zero(t, desc.PendingIndexRows, field)
	}
	kinds := map[string]bool{}
	require.NoError(t, filepath.WalkDir(filepath.Join(s.storageDir(t), "files", "index_files"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			kinds[filepath.Base(p)] = true
		}
		return err
	}))
	require.Equal(t, map[string]bool{"INVERTED": true, "STL_SORT": true, "Trie": true, "BITMAP": true}, kinds)

	for _, coll := range []string{plain, indexed} {
		indexAndLoad(ctx, t, c, coll, entity.L2)
		insertScalarRows(t, c, coll, 3000, 300) // growing rows keep scanning
		_, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id in [3001, 5, 6, 7]"))
		require.NoError(t, err)
	}
	ids := func(coll, filter string) []int64 {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("id").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, filter)
		out := make([]int64, rs.ResultCount)
		for i := range out {
			out[i], err = rs.GetColumn("id").GetAsInt64(i)
			require.NoError(t, err)
		}
		slices.Sort(out)
		return out
	}
	count := func(coll, filter string) int64 { return strongCount(t, c, coll, filter) }
	search := func(coll, filter string) []int64 {
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 20, []entity.Vector{entity.FloatVector{3, 5, 1, 1}}).
			WithANNSField("vec").WithFilter(filter).WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err, filter)
		out := make([]int64, rs[0].ResultCount)
		for i := range out {
			out[i], err = rs[0].IDs.GetAsInt64(i)
			require.NoError(t, err)
		}
		return out
	}
	r := rand.New(rand.NewPCG(11, 12))
	nonEmpty := 0
	for range 60 {
		f := randomScalarFilter(r, 2)
		want := ids(plain, f)
		require.Equal(t, want, ids(indexed, f), "query %s", f)
		require.EqualValues(t, len(want), count(indexed, f), "count %s", f)
		require.Equal(t, search(plain, f), search(indexed, f), "search %s", f)
		if len(want) > 0 {
			nonEmpty++
		}
	}
	require.Greater(t, nonEmpty, 20, "the filters must select rows")
	require.Empty(t, slices.DeleteFunc(ids(indexed, "age in [4, 5, 6]"), func(id int64) bool { return id >= 3000 || id%9 != 4 }),
		"deleted rows never match")
}
