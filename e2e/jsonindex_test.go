package e2e

import (
	"fmt"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestJSONPathIndexes checks Milvus 2.6's JSON-path indexes: several on one
// JSON field (one per json_path), one on a key of the dynamic field,
// default names `<field>/<path>`, case-insensitive cast types, conflicts
// refused, and filters, compaction and a restart working with them.
func TestJSONPathIndexes(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "jsonidx"
	schema := entity.NewSchema().WithName(coll).WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("doc").WithDataType(entity.FieldTypeJSON)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(2))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	insert := func(from, n int) {
		rows := make([]any, n)
		for i := range rows {
			id := from + i
			rows[i] = map[string]any{
				"id": int64(id), "vec": []float32{float32(id), 1},
				"doc": map[string]any{"a": map[string]any{"b": id}, "s": fmt.Sprintf("s%d", id%3)},
				"k":   map[string]any{"n": id % 5},
			}
		}
		_, err := c.Insert(ctx, milvusclient.NewRowBasedInsertOption(coll, rows...))
		require.NoError(t, err)
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
	}
	insert(0, 100)
	insert(100, 100)

	svc := c.GetService()
	create := func(field, name string, params map[string]string) *commonpb.Status {
		req := &milvuspb.CreateIndexRequest{CollectionName: coll, FieldName: field, IndexName: name}
		for k, v := range params {
			req.ExtraParams = append(req.ExtraParams, &commonpb.KeyValuePair{Key: k, Value: v})
		}
		st, err := svc.CreateIndex(ctx, req)
		require.NoError(t, err)
		return st
	}
	jp := func(path, cast string) map[string]string {
		return map[string]string{"index_type": "INVERTED", "json_path": path, "json_cast_type": cast}
	}
	for _, tc := range []struct {
		field, name string
		params      map[string]string
	}{
		{"vec", "", map[string]string{"index_type": "HNSW", "metric_type": "L2"}},
		{"doc", "", jp(`doc['a']['b']`, "double")},
		{"doc", "doc_s", jp(`doc["s"]`, "VarChar")},
		{"doc", "", map[string]string{"index_type": "INVERTED", "json_cast_type": "Json"}},
		{"k", "", jp(`k['n']`, "DOUBLE")},
	} {
		st := create(tc.field, tc.name, tc.params)
		require.Zero(t, st.GetCode(), "%s %v: %s", tc.field, tc.params, st.GetReason())
	}
	for _, tc := range []struct {
		field, name string
		params      map[string]string
		msg         string
	}{
		{"doc", "doc_s", jp(`doc["s"]`, "double"), "CreateIndex failed: at most one distinct index is allowed per field"},
		{"doc", "other", jp(`doc['a']['b']`, "varchar"), "CreateIndex failed: creating multiple indexes on same field is not supported"},
		{"k", "", jp(`k['n']`, "varchar"), "CreateIndex failed: at most one distinct index is allowed per field"},
	} {
		st := create(tc.field, tc.name, tc.params)
		require.EqualValues(t, 65535, st.GetCode())
		require.Contains(t, st.GetReason(), tc.msg)
	}
	st := create("doc", "", map[string]string{"index_type": "INVERTED", "json_path": "doc['x']"})
	require.Equal(t, merr.Code(merr.ErrParameterInvalid), st.GetCode())
	require.Contains(t, st.GetReason(), "json index must specify cast type")

	names := func() []string {
		got, err := c.ListIndexes(ctx, milvusclient.NewListIndexOption(coll))
		require.NoError(t, err)
		slices.Sort(got)
		return got
	}
	want := []string{"$meta/k/n", "doc", "doc/a/b", "doc_s", "vec"}
	require.Equal(t, want, names())
	describe := func() {
		t.Helper()
		for name, w := range map[string][3]string{
			"$meta/k/n": {"k", `k['n']`, "DOUBLE"},
			"doc/a/b":   {"doc", `doc['a']['b']`, "double"},
			"doc":       {"doc", "doc", "Json"},
		} {
			resp, err := svc.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{CollectionName: coll, IndexName: name})
			require.NoError(t, err)
			require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
			require.Len(t, resp.GetIndexDescriptions(), 1)
			d := resp.GetIndexDescriptions()[0]
			params := map[string]string{}
			for _, kv := range d.GetParams() {
				params[kv.GetKey()] = kv.GetValue()
			}
			require.Equal(t, w[0], d.GetFieldName(), name)
			require.Equal(t, w[1], params["json_path"], name)
			require.Equal(t, w[2], params["json_cast_type"], name)
			require.Equal(t, "INVERTED", params["index_type"], name)
		}
	}
	describe()

	count := func(filter string) int64 { return strongCount(t, c, coll, filter) }
	check := func() {
		t.Helper()
		require.EqualValues(t, 40, count(`k["n"] == 3`))
		require.EqualValues(t, 10, count(`doc["a"]["b"] < 10`))
		require.EqualValues(t, 67, count(`doc["s"] == "s0"`))
		require.EqualValues(t, 200, count(`exists doc["a"]`))
	}
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check()
	waitCompaction(t, ctx, svc, coll)
	check()

	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	svc = c.GetService()
	require.Equal(t, want, names(), "the indexes survive a restart")
	describe()
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	check()

	// Drop one of a field's indexes by name; naming only the field is
	// ambiguous.
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	dst, err := svc.DropIndex(ctx, &milvuspb.DropIndexRequest{CollectionName: coll, FieldName: "doc"})
	require.NoError(t, err)
	require.Contains(t, dst.GetReason(), "there are multiple indexes, please specify the index_name")
	require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption(coll, "doc_s")))
	require.Equal(t, []string{"$meta/k/n", "doc", "doc/a/b", "vec"}, names())
	st = create("doc", "doc_s2", jp(`doc["s"]`, "varchar"))
	require.Zero(t, st.GetCode(), "a dropped index frees its path: %s", st.GetReason())
}

// strongCount returns count(*) of the rows of coll matching filter, read
// with Strong consistency.
func strongCount(t *testing.T, c *milvusclient.Client, coll, filter string) int64 {
	t.Helper()
	rs, err := c.Query(ctxT(t), milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err, filter)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	return n
}
