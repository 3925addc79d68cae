package e2e

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

const (
	codeCollectionLoaded = 104
	codeIndexNotFound    = 700
	codePlainError       = 65535
)

// TestIndexBadInput checks that every malformed CreateIndex, search
// parameter and AlterIndex is refused with a Milvus status naming the
// problem, and that re-creating an identical index is accepted.
func TestIndexBadInput(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "idxbad"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("name").WithDataType(entity.FieldTypeVarChar).WithMaxLength(16)).
		WithField(entity.NewField().WithName("price").WithDataType(entity.FieldTypeDouble)).
		WithField(entity.NewField().WithName("meta").WithDataType(entity.FieldTypeJSON)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(4)).
		WithField(entity.NewField().WithName("vec2").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	create := func(field string, params map[string]string) error {
		req := &milvuspb.CreateIndexRequest{CollectionName: coll, FieldName: field}
		for k, v := range params {
			req.ExtraParams = append(req.ExtraParams, &commonpb.KeyValuePair{Key: k, Value: v})
		}
		resp, err := c.GetService().CreateIndex(ctx, req)
		require.NoError(t, err, "a transport error instead of a Milvus Status")
		return merr.Error(resp)
	}
	hnsw := func(m, efc string) map[string]string {
		return map[string]string{"index_type": "HNSW", "metric_type": "L2", "M": m, "efConstruction": efc}
	}
	for _, tc := range []struct {
		name   string
		field  string
		params map[string]string
		msg    []string
	}{
		{"unknown index type", "vec", map[string]string{"index_type": "FOO", "metric_type": "L2"}, []string{"invalid index type", "FOO"}},
		{"unknown metric", "vec", map[string]string{"index_type": "HNSW", "metric_type": "L3"}, []string{"metric type", "L3"}},
		{"metric not for float vectors", "vec", map[string]string{"index_type": "HNSW", "metric_type": "HAMMING"}, []string{"HAMMING"}},
		{"HNSW M too large", "vec", hnsw("4096", "100"), []string{"'M'", "4096", "[2, 2048]"}},
		{"HNSW M too small", "vec", hnsw("1", "100"), []string{"'M'", "[2, 2048]"}},
		{"HNSW M not a number", "vec", hnsw("many", "100"), []string{"'M'", "many"}},
		{"HNSW efConstruction zero", "vec", hnsw("16", "0"), []string{"efConstruction", "(0)"}},
		{"IVF nlist zero", "vec", map[string]string{"index_type": "IVF_FLAT", "metric_type": "L2", "nlist": "0"}, []string{"nlist"}},
		{"IVF nlist too large", "vec", map[string]string{"index_type": "IVF_FLAT", "metric_type": "L2", "nlist": "70000"}, []string{"nlist", "65536"}},
		{"scalar index on a vector", "vec", map[string]string{"index_type": "INVERTED"}, []string{"INVERTED", "vec", "scalar"}},
		{"vector index on a scalar", "price", map[string]string{"index_type": "HNSW"}, []string{"HNSW", "price"}},
		{"unknown scalar index type", "price", map[string]string{"index_type": "BTREE"}, []string{"invalid index type", "BTREE"}},
		{"STL_SORT on JSON", "meta", map[string]string{"index_type": "STL_SORT"}, []string{"STL_SORT", "got JSON"}},
		{"Trie on a number", "price", map[string]string{"index_type": "Trie"}, []string{"TRIE", "varchar", "price"}},
		{"BITMAP on Double", "price", map[string]string{"index_type": "BITMAP"}, []string{"bitmap", "price", "Double"}},
		{"BITMAP on the primary key", "id", map[string]string{"index_type": "BITMAP"}, []string{"primary key"}},
		{"BITMAP cardinality out of range", "name", map[string]string{"index_type": "BITMAP", "bitmap_cardinality_limit": "5000"}, []string{"cardinality"}},
		{"JSON index without params", "meta", map[string]string{"index_type": "INVERTED"}, []string{"json index must specify cast type", "missing_param=json_cast_type"}},
		{"JSON index with an unknown cast type", "meta", map[string]string{"index_type": "INVERTED", "json_cast_type": "INT64"}, []string{"json_cast_type INT64 is not supported"}},
		{"JSON index by default type", "meta", nil, []string{"json_cast_type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := create(tc.field, tc.params)
			require.Error(t, err)
			require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "status code of %v", err)
			for _, m := range tc.msg {
				require.Contains(t, err.Error(), m)
			}
		})
	}
	// Without a dynamic field an unknown field is Milvus's plain error.
	err := create("nope", map[string]string{"index_type": "INVERTED"})
	require.Equal(t, int32(codePlainError), merr.Code(err))
	require.Contains(t, err.Error(), "cannot create index on non-exist field: nope")
	_, err = c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vec"))
	require.Error(t, err, "no refused index was recorded")

	// One distinct index per field; an identical re-create is a no-op.
	require.NoError(t, create("vec", hnsw("16", "64")))
	require.NoError(t, create("vec", hnsw("16", "64")))
	err = create("vec", hnsw("32", "64"))
	require.Error(t, err)
	require.Equal(t, int32(codePlainError), merr.Code(err))
	require.Contains(t, err.Error(), "CreateIndex failed: at most one distinct index is allowed per field")
	require.NoError(t, create("price", map[string]string{"index_type": "STL_SORT"}))
	require.Error(t, create("price", map[string]string{"index_type": "INVERTED"}))
	require.NoError(t, create("meta", map[string]string{"index_type": "INVERTED", "json_cast_type": "double", "json_path": `meta["a"]`}))

	// Search parameters.
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", []int64{1, 2}).
		WithVarcharColumn("name", []string{"a", "b"}).WithColumns(column.NewColumnDouble("price", []float64{1, 2}),
		column.NewColumnJSONBytes("meta", [][]byte{[]byte(`{"a":1}`), []byte(`{"a":2}`)})).
		WithFloatVectorColumn("vec", 4, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}).
		WithFloatVectorColumn("vec2", 4, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}}))
	require.NoError(t, err)
	require.NoError(t, create("vec2", map[string]string{"index_type": "IVF_FLAT", "metric_type": "L2", "nlist": "2"}))
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	// A JSON-path index is recorded and its (empty) builds finish.
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "meta",
		index.NewJSONPathIndex(index.Inverted, "double", `meta["a"]`)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	desc, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "meta/a"))
	require.NoError(t, err)
	require.EqualValues(t, 2, desc.IndexedRows)
	require.Equal(t, "INVERTED", desc.Params()["index_type"])
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	for _, tc := range []struct {
		field, params string
		msg           []string
	}{
		{"vec", `{"ef": 5}`, []string{"ef(5)", "k(10)"}},
		{"vec", `{"ef": 32.0}`, []string{"Type conflict in json: param 'ef' (32.0) should be integer"}},
		{"vec2", `{"nprobe": 0}`, []string{"nprobe", "[1, 65536]"}},
		{"vec2", `{"nprobe": 70000}`, []string{"nprobe", "[1, 65536]"}},
		{"vec2", `{"nprobe": true}`, []string{"Type conflict in json: param 'nprobe' (true) should be integer"}},
	} {
		_, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 10, []entity.Vector{entity.FloatVector{1, 0, 0, 0}}).
			WithANNSField(tc.field).WithSearchParam("params", tc.params))
		require.Error(t, err, tc.params)
		// Milvus's code for a search parameter its index library refuses,
		// on HNSW and IVF (test_hnsw.py, test_ivf_rabitq.py).
		require.Equal(t, int32(999), merr.Code(err), "status code of %v", err)
		for _, m := range tc.msg {
			require.Contains(t, err.Error(), m)
		}
	}

	// AlterIndex: only mmap.enabled and indexoffsetcache.enabled, only on a released collection.
	alter := func(name string, kv ...string) error {
		opt := milvusclient.NewAlterIndexPropertiesOption(coll, name)
		for i := 0; i < len(kv); i += 2 {
			opt.WithProperty(kv[i], kv[i+1])
		}
		return c.AlterIndexProperties(ctx, opt)
	}
	err = alter("vec", "mmap.enabled", "true")
	require.Error(t, err)
	require.Equal(t, int32(codeCollectionLoaded), merr.Code(err), "status code of %v", err)
	require.Contains(t, err.Error(), "can't alter index on loaded collection")
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	for _, tc := range []struct {
		name string
		kv   []string
		code int32
		msg  string
	}{
		{"vec", []string{"M", "32"}, codeIllegalArgument, "M is not a configable index property"},
		{"vec", []string{"mmap.enabled", "perhaps"}, codeIllegalArgument, "mmap.enabled"},
		{"missing", []string{"mmap.enabled", "true"}, codeIndexNotFound, "missing"},
		{"", []string{"mmap.enabled", "true"}, codeIllegalArgument, "index name is empty"},
		{"vec", []string{"indexoffsetcache.enabled", "true"}, codeIllegalArgument, "only bitmap index support indexoffsetcache.enabled now"},
	} {
		err := alter(tc.name, tc.kv...)
		require.Error(t, err, tc.msg)
		require.Equal(t, tc.code, merr.Code(err), "status code of %v", err)
		require.Contains(t, err.Error(), tc.msg)
	}
	require.NoError(t, alter("vec", "mmap.enabled", "true"))
	require.NoError(t, alter("vec", "indexoffsetcache.enabled", "false"), "turning the cache off is allowed on any index")
	desc, err = c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vec"))
	require.NoError(t, err)
	require.Equal(t, "true", desc.Params()["mmap.enabled"])
	require.Equal(t, "16", desc.Params()["M"], "altering keeps the build parameters")
	require.NoError(t, create("vec", hnsw("16", "64")), "an identical re-create still matches after an alter")

	// The property survives a restart (it is in the catalog).
	s.stop()
	s2 := startServer(t, s.dir)
	c2 := s2.client(t)
	desc, err = c2.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vec"))
	require.NoError(t, err)
	require.Equal(t, "true", desc.Params()["mmap.enabled"])
	require.NoError(t, c2.DropIndexProperties(ctx, milvusclient.NewDropIndexPropertiesOption(coll, "vec", "mmap.enabled")))
	desc, err = c2.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption(coll, "vec"))
	require.NoError(t, err)
	require.NotContains(t, desc.Params(), "mmap.enabled")
	err = c2.DropIndexProperties(ctx, milvusclient.NewDropIndexPropertiesOption(coll, "vec", "nlist"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "nlist is not a configable index property")
}
