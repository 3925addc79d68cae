package proxy

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
)

// parseColl is the collection the parser tests read: "c" (ID 7) with an
// Int64 primary key, a 2-dimensional float vector v, scalars, a JSON field,
// the dynamic field and a second partition p1.
func parseColl(extra ...*schemapb.FieldSchema) *catalog.Collection {
	dim := func(d string) []*commonpb.KeyValuePair { return []*commonpb.KeyValuePair{{Key: "dim", Value: d}} }
	fields := []*schemapb.FieldSchema{
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: dim("2")},
		{
			FieldID: 102, Name: "tag", DataType: schemapb.DataType_VarChar,
			TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "64"}},
		},
		{FieldID: 103, Name: "n", DataType: schemapb.DataType_Int64},
		{FieldID: 104, Name: "f", DataType: schemapb.DataType_Float},
		{FieldID: 105, Name: "j", DataType: schemapb.DataType_JSON},
		{FieldID: 106, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
	}
	fields = append(fields, extra...)
	return &catalog.Collection{
		CollectionInfo: catalog.CollectionInfo{
			ID: 7, DBName: "default", Name: "c",
			ConsistencyLevel: int32(commonpb.ConsistencyLevel_Bounded),
			Partitions:       []catalog.PartitionInfo{{ID: 1, Name: "_default"}, {ID: 2, Name: "p1"}},
		},
		Schema: &schemapb.CollectionSchema{Name: "c", Fields: fields, EnableDynamicField: true},
	}
}

// multiColl adds a binary and a sparse vector field to parseColl.
func multiColl() *catalog.Collection {
	return parseColl(
		&schemapb.FieldSchema{
			FieldID: 107, Name: "b", DataType: schemapb.DataType_BinaryVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "16"}},
		},
		&schemapb.FieldSchema{FieldID: 108, Name: "s", DataType: schemapb.DataType_SparseFloatVector})
}

// parseNow is the clock of the parser tests.
var parseNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// testEnv is the parser tests' environment with indexes (openIndexes when
// none are given).
func testEnv(indexes ...catalog.IndexInfo) readEnv {
	if len(indexes) == 0 {
		indexes = openIndexes()
	}
	return readEnv{now: parseNow, staleness: 5 * time.Second, indexes: indexes, loaded: true}
}

// openIndexes are indexes that fix neither a type nor a metric, one on
// every field ID the test collections use: a search needs an index on its
// field, and through these the parser reads a request as it reads one on a
// field whose index leaves the metric to the request.
func openIndexes() []catalog.IndexInfo {
	var out []catalog.IndexInfo
	for id := int64(100); id < 200; id++ {
		out = append(out, catalog.IndexInfo{ID: id, CollectionID: 7, FieldID: id, Params: map[string]string{}})
	}
	return out
}

// l2Index is an L2 index on v.
var l2Index = catalog.IndexInfo{
	ID: 1, CollectionID: 7, FieldID: 101, Name: "v",
	Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
}

func kvs(pairs ...string) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, &commonpb.KeyValuePair{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// floats is a float-vector placeholder group of the given query vectors.
func floats(t *testing.T, vs ...[]float32) []byte {
	var values [][]byte
	for _, v := range vs {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		values = append(values, b)
	}
	return group(t, commonpb.PlaceholderType_FloatVector, values...)
}

// searchReq is a search of one query vector on v with the given search
// parameters (topk first unless the pairs set it).
func searchReq(t *testing.T, pairs ...string) *milvuspb.SearchRequest {
	return &milvuspb.SearchRequest{
		CollectionName: "c", SearchParams: kvs(pairs...),
		SearchInput: &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: floats(t, []float32{1, 2})},
	}
}

func byIDs(ids ...int64) *milvuspb.SearchRequest_Ids {
	return &milvuspb.SearchRequest_Ids{Ids: &schemapb.IDs{IdField: &schemapb.IDs_IntId{IntId: &schemapb.LongArray{Data: ids}}}}
}

// TestParseSearchAccepts: each accepted form of a search becomes the query
// node's request and the answer's shape as the proxy runs them.
func TestParseSearchAccepts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		col   *catalog.Collection
		env   readEnv
		req   func(*milvuspb.SearchRequest)
		check func(*testing.T, *searchPlan)
	}{
		{name: "defaults", check: func(t *testing.T, sp *searchPlan) {
			s := sp.sreq
			require.Equal(t, int64(101), s.FieldID)
			require.Equal(t, plan.MetricCosine, s.Metric, "no index, no request: the float default")
			require.Equal(t, [][]float32{{1, 2}}, s.Vectors)
			require.Equal(t, 10, s.TopK)
			require.Equal(t, 10, sp.topk)
			require.Zero(t, sp.offset)
			require.Equal(t, -1, sp.round)
			require.Equal(t, int64(7), s.CollectionID)
			require.Empty(t, s.PartitionIDs)
			require.Empty(t, s.OutputFields)
			require.Nil(t, sp.iter)
			require.Nil(t, sp.ranker)
			require.Nil(t, sp.byPK)
			require.Equal(t, "UTC", s.Timezone)
			require.True(t, s.Strong, "the request's level is Strong (0) unless it says otherwise")
		}},
		{
			name: "bounded", req: func(r *milvuspb.SearchRequest) { r.ConsistencyLevel = commonpb.ConsistencyLevel_Bounded },
			check: func(t *testing.T, sp *searchPlan) {
				require.False(t, sp.sreq.Strong)
				require.Equal(t, uint64(parseNow.Add(-5*time.Second).UnixMilli())<<18, sp.sreq.GuaranteeTS, "Bounded by the staleness")
			},
		},
		{name: "offset widens the query node's topk", req: set("topk", "10", "offset", "5"), check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, 15, sp.sreq.TopK)
			require.Equal(t, 10, sp.topk)
			require.Equal(t, 5, sp.offset)
		}},
		{name: "empty offset is none", req: set("topk", "3", "offset", ""), check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, 3, sp.sreq.TopK)
			require.Zero(t, sp.offset)
		}},
		{name: "metric from the index", env: testEnv(l2Index), check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, plan.MetricL2, sp.sreq.Metric)
			require.Equal(t, plan.MetricL2, sp.metric)
		}},
		{
			name: "requested metric matching the index, any case", env: testEnv(l2Index), req: set("topk", "10", "metric_type", "l2"),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, plan.MetricL2, sp.sreq.Metric) },
		},
		{
			name: "requested metric without an index", req: set("topk", "10", "metric_type", "IP"),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, plan.MetricIP, sp.sreq.Metric) },
		},
		{
			name: "named anns field", col: multiColl(), req: set("topk", "10", "anns_field", "v"),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, int64(101), sp.sreq.FieldID) },
		},
		{name: "binary field defaults to HAMMING", col: multiColl(), req: func(r *milvuspb.SearchRequest) {
			r.SearchParams = kvs("topk", "10", "anns_field", "b")
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: group(t, commonpb.PlaceholderType_BinaryVector, []byte{1, 2})}
		}, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, plan.MetricHamming, sp.sreq.Metric)
			require.Equal(t, [][]byte{{1, 2}}, sp.sreq.Binary)
		}},
		{
			name: "ef, nprobe, radius and range_filter", req: set("topk", "10", "params", `{"ef": 64, "nprobe": "8", "radius": 0.5, "range_filter": "0.9"}`),
			check: func(t *testing.T, sp *searchPlan) {
				s := sp.sreq
				require.Equal(t, 64, s.Ef)
				require.Equal(t, 8, s.Nprobe)
				require.True(t, s.HasRadius)
				require.InDelta(t, 0.5, s.Radius, 0)
				require.True(t, s.HasRange)
				require.InDelta(t, 0.9, s.RangeFilter, 0)
			},
		},
		{
			name: "ef equal to topk+offset", req: set("topk", "10", "offset", "5", "params", `{"ef": 15}`),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, 15, sp.sreq.Ef) },
		},
		{
			name: "sparse search parameters", req: set("topk", "10", "params", `{"drop_ratio_search": 0.2, "refine_factor": 2, "dim_max_score_ratio": 1}`),
			check: func(t *testing.T, sp *searchPlan) {
				require.InDelta(t, 0.2, sp.sreq.DropRatioSearch, 0)
				require.Equal(t, 2, sp.sreq.RefineFactor)
			},
		},
		{
			name: "quantized index search parameters", req: set("topk", "10", "params", `{"ef": 64, "refine_k": "2.5", "rbq_bits_query": 6}`),
			check: func(t *testing.T, sp *searchPlan) {
				require.InDelta(t, 2.5, sp.sreq.RefineK, 0)
				require.Equal(t, 6, sp.sreq.RbqBitsQuery)
			},
		},
		{
			name: "hint iterative_filter", req: set("topk", "10", "hints", "iterative_filter", "params", `{"hints": "iterative_filter"}`),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, 10, sp.sreq.TopK) },
		},
		{
			name: "group by", req: set("topk", "4", "group_by_field", "tag", "group_size", "3", "strict_group_size", "True"),
			check: func(t *testing.T, sp *searchPlan) {
				require.Equal(t, int64(102), sp.sreq.GroupByField)
				require.Equal(t, 3, sp.sreq.GroupSize)
				require.True(t, sp.sreq.StrictGroupSize)
			},
		},
		{
			name: "group by with the default group size", req: set("topk", "4", "group_by_field", "n"),
			check: func(t *testing.T, sp *searchPlan) {
				require.Equal(t, int64(103), sp.sreq.GroupByField)
				require.Equal(t, 1, sp.sreq.GroupSize)
				require.False(t, sp.sreq.StrictGroupSize)
			},
		},
		{
			name: "iterator v2 batch", req: set("topk", "100", "offset", "3", "iterator", "True", "search_iter_v2", "True",
				"search_iter_batch_size", "5", "search_iter_last_bound", "0.25", "search_iter_id", "tok"),
			check: func(t *testing.T, sp *searchPlan) {
				require.Equal(t, 5, sp.sreq.TopK, "the batch size replaces topk")
				require.Equal(t, 5, sp.topk)
				require.Zero(t, sp.offset, "an iterator does not page by offset")
				require.True(t, sp.sreq.HasAfter)
				require.InDelta(t, 0.25, sp.sreq.After, 0)
				require.Equal(t, "tok", sp.iter.GetToken())
			},
		},
		{
			name: "iterator v2 first batch", req: set("topk", "7", "iterator", "true", "search_iter_v2", "true"),
			check: func(t *testing.T, sp *searchPlan) {
				require.Equal(t, 7, sp.sreq.TopK)
				require.True(t, sp.sreq.HasAfter)
				require.True(t, math.IsInf(float64(sp.sreq.After), 1), "COSINE: higher is better, the bound is +Inf")
				require.Equal(t, strconv.FormatInt(parseNow.UnixNano(), 36), sp.iter.GetToken(), "a token from the clock")
			},
		},
		{
			name: "iterator v2 first batch with L2", env: testEnv(l2Index), req: set("topk", "7", "iterator", "true", "search_iter_v2", "true"),
			check: func(t *testing.T, sp *searchPlan) {
				require.True(t, math.IsInf(float64(sp.sreq.After), -1), "L2: lower is better, the bound is -Inf")
			},
		},
		{
			name: "iterator v1 is a plain search", req: set("topk", "7", "iterator", "true"),
			check: func(t *testing.T, sp *searchPlan) {
				require.Nil(t, sp.iter)
				require.False(t, sp.sreq.HasAfter)
			},
		},
		{name: "output fields, a dynamic key and $meta[...]", req: func(r *milvuspb.SearchRequest) {
			r.OutputFields = []string{"n", "tag", "color", `$meta["size"]`}
		}, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, []int64{103, 102, 106}, sp.sreq.OutputFields)
			require.Equal(t, []string{"n", "tag", "color", "size"}, sp.out.names)
			require.Equal(t, []string{"color", "size"}, sp.out.dynKeys)
		}},
		{name: "output *", req: func(r *milvuspb.SearchRequest) { r.OutputFields = []string{"*"} }, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, []int64{100, 101, 102, 103, 104, 105, 106}, sp.sreq.OutputFields)
			require.True(t, sp.out.allDyn)
		}},
		{
			name: "partitions", req: func(r *milvuspb.SearchRequest) { r.PartitionNames = []string{"p1", "_default"} },
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, []int64{2, 1}, sp.sreq.PartitionIDs) },
		},
		{name: "filter and templates", req: func(r *milvuspb.SearchRequest) {
			r.Dsl = "n > {lo}"
			r.ExprTemplateValues = map[string]*schemapb.TemplateValue{"lo": {Val: &schemapb.TemplateValue_Int64Val{Int64Val: 3}}}
		}, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, "n > {lo}", sp.sreq.Filter)
			require.Contains(t, sp.sreq.Templates, "lo")
		}},
		{
			name: "strong", req: func(r *milvuspb.SearchRequest) { r.ConsistencyLevel = commonpb.ConsistencyLevel_Strong },
			check: func(t *testing.T, sp *searchPlan) {
				require.True(t, sp.sreq.Strong)
				require.Zero(t, sp.sreq.GuaranteeTS)
			},
		},
		{
			name: "eventually", req: func(r *milvuspb.SearchRequest) { r.ConsistencyLevel = commonpb.ConsistencyLevel_Eventually },
			check: func(t *testing.T, sp *searchPlan) {
				require.False(t, sp.sreq.Strong)
				require.Equal(t, uint64(1), sp.sreq.GuaranteeTS)
			},
		},
		{name: "session with a guarantee", req: func(r *milvuspb.SearchRequest) {
			r.ConsistencyLevel, r.GuaranteeTimestamp = commonpb.ConsistencyLevel_Session, 99
		}, check: func(t *testing.T, sp *searchPlan) {
			require.False(t, sp.sreq.Strong)
			require.Equal(t, uint64(99), sp.sreq.GuaranteeTS)
		}},
		{
			name: "session without a guarantee is strong", req: func(r *milvuspb.SearchRequest) { r.ConsistencyLevel = commonpb.ConsistencyLevel_Session },
			check: func(t *testing.T, sp *searchPlan) { require.True(t, sp.sreq.Strong) },
		},
		{name: "customized", req: func(r *milvuspb.SearchRequest) {
			r.ConsistencyLevel, r.GuaranteeTimestamp = commonpb.ConsistencyLevel_Customized, 42
		}, check: func(t *testing.T, sp *searchPlan) { require.Equal(t, uint64(42), sp.sreq.GuaranteeTS) }},
		{name: "default level reads the client's own writes", req: func(r *milvuspb.SearchRequest) {
			r.UseDefaultConsistency, r.GuaranteeTimestamp = true, math.MaxUint64>>1
		}, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, uint64(math.MaxUint64>>1), sp.sreq.GuaranteeTS, "Bounded, but no older than the client's last write")
		}},
		{name: "default level is the collection's", col: strongColl(), req: func(r *milvuspb.SearchRequest) {
			r.UseDefaultConsistency = true
		}, check: func(t *testing.T, sp *searchPlan) { require.True(t, sp.sreq.Strong) }},
		{name: "ignore_growing, round_decimal and timezone", req: set("topk", "10", "ignore_growing", "True", "round_decimal", "3",
			"timezone", "Asia/Tokyo"), check: func(t *testing.T, sp *searchPlan) {
			require.True(t, sp.sreq.IgnoreGrowing)
			require.Equal(t, 3, sp.round)
			require.Equal(t, "Asia/Tokyo", sp.sreq.Timezone)
			require.Equal(t, "Asia/Tokyo", sp.loc.String())
		}},
		{
			name: "collection_id of this collection", req: set("topk", "10", "collection_id", "7"),
			check: func(t *testing.T, sp *searchPlan) { require.Equal(t, int64(7), sp.sreq.CollectionID) },
		},
		{name: "by primary keys: vectors are read when it runs", req: func(r *milvuspb.SearchRequest) {
			r.SearchInput, r.Nq = byIDs(4, 5, 6), 3
		}, check: func(t *testing.T, sp *searchPlan) {
			require.Equal(t, []int64{4, 5, 6}, sp.byPK.GetIntId().GetData())
			require.Empty(t, sp.sreq.Vectors)
		}},
		{name: "decay function score adds its input to the output", req: func(r *milvuspb.SearchRequest) {
			r.FunctionScore = decayScore("n")
		}, check: func(t *testing.T, sp *searchPlan) {
			require.NotNil(t, sp.ranker)
			require.Equal(t, []int64{103}, sp.sreq.OutputFields)
			require.Empty(t, sp.out.ids, "the user did not ask for it")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col, env := tc.col, tc.env
			if col == nil {
				col = parseColl()
			}
			if env.now.IsZero() {
				env = testEnv()
			}
			req := searchReq(t, "topk", "10")
			if tc.req != nil {
				tc.req(req)
			}
			sp, err := parseSearch(col, req, env)
			require.NoError(t, err)
			tc.check(t, sp)
			again, err := parseSearch(col, req, env)
			require.NoError(t, err)
			require.Equal(t, sp.sreq, again.sreq, "parsing is a function of its inputs")
		})
	}
}

// set replaces a request's search parameters.
func set(pairs ...string) func(*milvuspb.SearchRequest) {
	return func(r *milvuspb.SearchRequest) { r.SearchParams = kvs(pairs...) }
}

func strongColl() *catalog.Collection {
	c := parseColl()
	c.ConsistencyLevel = int32(commonpb.ConsistencyLevel_Strong)
	return c
}

// decayScore is a gauss decay reranker on field.
func decayScore(field string) *schemapb.FunctionScore {
	return &schemapb.FunctionScore{Functions: []*schemapb.FunctionSchema{{
		Name: "d", Type: schemapb.FunctionType_Rerank,
		InputFieldNames: []string{field},
		Params:          kvs("reranker", "decay", "function", "gauss", "origin", "0", "scale", "10"),
	}}}
}

// TestParseSearchRefuses: each refusal with Milvus's code and message, the
// first problem of a request reported.
func TestParseSearchRefuses(t *testing.T) {
	const bad = errcode.IllegalArgument
	for _, tc := range []struct {
		name string
		col  *catalog.Collection
		env  readEnv
		req  func(*milvuspb.SearchRequest)
		code int32
		msg  string
	}{
		{"collection_id not an integer", nil, readEnv{}, set("topk", "10", "collection_id", "x"), bad, `collection_id "x" is not an integer`},
		{
			"collection_id of another collection", nil,
			readEnv{},
			set("topk", "10", "collection_id", "8"), bad,
			"collection c now has id 7, not 8: the alias or database may have been changed",
		},
		{"no topk", nil, readEnv{}, set("metric_type", "L2"), bad, "topk not found in search_params"},
		{"topk not an integer", nil, readEnv{}, set("topk", "ten"), bad, `topk "ten" is not an integer`},
		{
			"topk 0", nil,
			readEnv{},
			set("topk", "0"), bad,
			"topk [0] is invalid, it should be in range [1, 16384], but got 0: invalid parameter",
		},
		{
			"topk too large", nil,
			readEnv{},
			set("topk", "16385"), bad,
			"topk [16385] is invalid, it should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"negative offset", nil,
			readEnv{},
			set("topk", "10", "offset", "-1"), bad,
			"offset [-1] is invalid, it should be in range [1, 16384], but got -1: invalid parameter",
		},
		{
			"offset not an integer", nil,
			readEnv{},
			set("topk", "10", "offset", "x"), bad,
			"offset [x] is invalid, it should be in range [1, 16384], but got x: invalid parameter",
		},
		{
			"offset too large", nil,
			readEnv{},
			set("topk", "10", "offset", "16385"), bad,
			"offset [16385] is invalid, it should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"offset+topk too large", nil,
			readEnv{},
			set("topk", "16000", "offset", "1000"), bad,
			"offset+topk [17000] is invalid, it should be in range [1, 16384], but got 17000: invalid parameter",
		},
		{"unknown hint", nil, readEnv{}, set("topk", "10", "hints", "fast"), bad, "Create Plan by expr failed:  => hints: fast not supported"},
		{
			"unknown time zone", nil,
			readEnv{},
			set("topk", "10", "timezone", "Mars/Base"), bad,
			"unknown or invalid IANA Time Zone ID: Mars/Base: invalid parameter",
		},
		{
			"round_decimal out of range", nil,
			readEnv{},
			set("topk", "10", "round_decimal", "7"), bad,
			`round_decimal "7" should be an integer in [-1, 6]`,
		},
		{
			"round_decimal not an integer", nil,
			readEnv{},
			set("topk", "10", "round_decimal", "x"), bad,
			`round_decimal "x" should be an integer in [-1, 6]`,
		},
		{
			"unknown anns field", nil,
			readEnv{},
			set("topk", "10", "anns_field", "nope"), bad,
			"failed to create query plan: failed to get field schema by name: fieldName(nope) not found: invalid parameter",
		},
		{
			"scalar anns field", nil,
			readEnv{},
			set("topk", "10", "anns_field", "n"), bad,
			"failed to create query plan: failed to get field schema by name: fieldName(n) not found: invalid parameter",
		},
		{
			"several vector fields, none named", multiColl(),
			readEnv{},
			nil, bad,
			"multiple anns_fields exist, please specify a anns_field in search_params",
		},
		{
			"several vector fields, none named, by primary keys", multiColl(),
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.SearchInput = byIDs(1) }, bad,
			"multiple vector fields exist, please specify anns_field in search_params",
		},
		{"no vector field", noVectorColl(), readEnv{}, nil, bad, "the collection has no vector field"},
		{"malformed placeholder group", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: []byte{0xff}}
		}, bad, ""},
		{"binary queries on a float field", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: group(t, commonpb.PlaceholderType_BinaryVector, []byte{1})}
		}, bad, "query vectors of type BinaryVector do not match the float vector field"},
		{"wrong dimension", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: floats(t, []float32{1, 2, 3})}
		}, bad, "the dimension of query vector 0 is 3, but the field's dimension is 2"},
		{"NaN query", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: floats(t, []float32{1, float32(math.NaN())})}
		}, bad, "query vector 0 contains NaN or Inf"},
		{"no query vectors", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchInput = &milvuspb.SearchRequest_PlaceholderGroup{PlaceholderGroup: group(t, commonpb.PlaceholderType_FloatVector)}
		}, bad, "no query vectors were sent"},
		{"float queries on a sparse field", multiColl(), readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchParams = kvs("topk", "10", "anns_field", "s")
		}, bad, "query vectors of type FloatVector do not match the sparse float vector field"},
		{
			"nq does not match", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.Nq = 2 }, bad,
			"nq (2) does not match the number of query vectors (1)",
		},
		{
			"nq does not match the primary keys", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.SearchInput, r.Nq = byIDs(1, 2), 3 }, bad,
			"nq (3) does not match the number of query vectors (2)",
		},
		{
			"too many queries", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.SearchInput = byIDs(make([]int64, MaxNQ+1)...) }, bad,
			"nq [16385] is invalid, nq (number of search vector per search request) should be in range [1, 16384], but got 16385: invalid parameter",
		},
		{
			"metric not the index's", nil, testEnv(l2Index), set("topk", "10", "metric_type", "IP"), bad,
			"metric type not match: invalid parameter[expected=L2][actual=IP]",
		},
		{
			"binary metric on a float field", nil,
			readEnv{},
			set("topk", "10", "metric_type", "HAMMING"), bad,
			`metric type HAMMING is not supported for the FloatVector field "v", supported: [L2 IP COSINE]`,
		},
		{
			"unknown metric", nil,
			readEnv{},
			set("topk", "10", "metric_type", "FOO"), bad,
			"metric type FOO not found or not supported, supported: [L2 IP COSINE]",
		},
		{
			"iterator batch size 0", nil,
			readEnv{},
			set("topk", "10", "iterator", "true", "search_iter_v2", "true", "search_iter_batch_size", "0"), bad,
			`search_iter_batch_size "0" should be an integer in [1, 16384]`,
		},
		{
			"iterator batch size too large", nil,
			readEnv{},
			set("topk", "10", "iterator", "true", "search_iter_v2", "true", "search_iter_batch_size", "16385"), bad,
			`search_iter_batch_size "16385" should be an integer in [1, 16384]`,
		},
		{
			"iterator last bound not a number", nil,
			readEnv{},
			set("topk", "10", "iterator", "true", "search_iter_v2", "true", "search_iter_last_bound", "x"), bad,
			`search_iter_last_bound "x" is not a number`,
		},
		{
			"group by while iterating (v2)", nil,
			readEnv{},
			set("topk", "10", "iterator", "true", "search_iter_v2", "true", "group_by_field", "n"), bad,
			"Not allowed to do groupBy when doing iteration",
		},
		{
			"group by while iterating (v1)", nil,
			readEnv{},
			set("topk", "10", "iterator", "True", "group_by_field", "n"), bad,
			"Not allowed to do groupBy when doing iteration",
		},
		{"group by an unknown field", nil, readEnv{}, set("topk", "10", "group_by_field", "nope"), bad, `group_by_field "nope" does not exist`},
		{"group by a system field", nil, readEnv{}, set("topk", "10", "group_by_field", "RowID"), bad, `group_by_field "RowID" does not exist`},
		{"group by a float field", nil, readEnv{}, set("topk", "10", "group_by_field", "f"), bad, "unsupported data type FLOAT for group by operator"},
		{"group by a JSON field", nil, readEnv{}, set("topk", "10", "group_by_field", "j"), bad, "unsupported data type JSON for group by operator"},
		{"group by a vector field", nil, readEnv{}, set("topk", "10", "group_by_field", "v"), bad, "unsupported data type VECTOR_FLOAT for group by operator"},
		{"group size not an integer", nil, readEnv{}, set("topk", "10", "group_by_field", "n", "group_size", "x"), bad, `group_size "x" should be an integer`},
		{
			"group size 0", nil,
			readEnv{},
			set("topk", "10", "group_by_field", "n", "group_size", "0"), bad,
			"input group size:0 is negative, failed to do search_groupby: invalid parameter",
		},
		{
			"group size too large", nil,
			readEnv{},
			set("topk", "10", "group_by_field", "n", "group_size", "11"), bad,
			"input group size:11 exceeds configured max group size:10: invalid parameter",
		},
		{"params not JSON", nil, readEnv{}, set("topk", "10", "params", "{"), bad, `search params "{" are not a JSON object`},
		{
			"unknown hint in params", nil,
			readEnv{},
			set("topk", "10", "params", `{"hints": "fast"}`), bad,
			"Create Plan by expr failed:  => hints: fast not supported",
		},
		{
			"drop_ratio_search out of range", nil,
			readEnv{},
			set("topk", "10", "params", `{"drop_ratio_search": 1}`), bad,
			"invalid drop_ratio_search: 1, must be in range [0, 1)",
		},
		{
			"dim_max_score_ratio out of range", nil,
			readEnv{},
			set("topk", "10", "params", `{"dim_max_score_ratio": 2}`), bad,
			"Out of range in json: param 'dim_max_score_ratio' (2) should be in range [0.500000, 1.300000]",
		},
		{"refine_factor 0", nil, readEnv{}, set("topk", "10", "params", `{"refine_factor": 0}`), bad, "refine_factor 0 should be a positive integer"},
		{"radius not a number", nil, readEnv{}, set("topk", "10", "params", `{"radius": "far"}`), bad, "radius far is not a number"},
		{"range_filter not a number", nil, readEnv{}, set("topk", "10", "params", `{"range_filter": [1]}`), bad, "range_filter [1] is not a number"},
		{
			"unknown output field", noDynamicColl(),
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.OutputFields = []string{"nope"} }, bad,
			"field nope not exist",
		},
		{"bad dynamic key", nil, readEnv{}, func(r *milvuspb.SearchRequest) { r.OutputFields = []string{"a-b"} }, bad, "field a-b not exist"},
		{
			"count(*) in a search", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.OutputFields = []string{"count(*)"} }, bad,
			"count(*) is not an output field of search",
		},
		{
			"count(*) with other fields", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.OutputFields = []string{"count(*)", "n"} }, bad,
			"count entities with other output fields is not supported: [count(*) n]",
		},
		{
			"unknown partition", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.PartitionNames = []string{"p1", "nope"} },
			errcode.PartitionNotFound, "partition name nope not found",
		},
		{
			"partition names in partition key mode", keyColl(),
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.PartitionNames = []string{"p1"} }, bad,
			"not support manually specifying the partition names if partition key mode is used",
		},
		{
			"ignore_growing not a boolean", nil,
			readEnv{},
			set("topk", "10", "ignore_growing", "maybe"), bad,
			`parse ignore growing field failed: "maybe" is not a boolean`,
		},
		{"two rerank functions", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.FunctionScore = decayScore("n")
			r.FunctionScore.Functions = append(r.FunctionScore.Functions, r.FunctionScore.Functions[0])
		}, bad, "currently only supports one rerank function, but got 2"},
		{
			"decay on a string field", nil,
			readEnv{},
			func(r *milvuspb.SearchRequest) { r.FunctionScore = decayScore("tag") }, bad,
			"decay rerank: unsupported input field type:VarChar, only support numeric field",
		},
		{
			"a vector field without an index (added after the load)", nil,
			readEnv{indexes: []catalog.IndexInfo{}, loaded: true},
			set("topk", "10"), errcode.Segcore,
			"field v is not loaded, please reload the collection",
		},
		{"function score with an iterator", nil, readEnv{}, func(r *milvuspb.SearchRequest) {
			r.SearchParams = kvs("topk", "10", "iterator", "true", "search_iter_v2", "true")
			r.FunctionScore = decayScore("n")
		}, bad, "a function score reranker cannot be combined with a search iterator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col, env := tc.col, tc.env
			if col == nil {
				col = parseColl()
			}
			if env.now.IsZero() {
				env.now, env.staleness = parseNow, 5*time.Second
			}
			if env.indexes == nil {
				env.indexes, env.loaded = openIndexes(), true
			}
			req := searchReq(t, "topk", "10")
			if tc.req != nil {
				tc.req(req)
			}
			sp, err := parseSearch(col, req, env)
			require.Error(t, err)
			require.Nil(t, sp)
			require.Equal(t, tc.code, errcode.CodeOf(err), err.Error())
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Error())
			}
		})
	}
}

// TestParseSearchFilterErrors: a filter that does not compile is refused
// (1100, "failed to create query plan: …") before anything else of the
// request is read, and again in the time zone of the read.
func TestParseSearchFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		name, filter string
		col          *catalog.Collection
		params       []string
	}{
		{"syntax, before a missing topk", "n >", parseColl(), nil},
		{"unknown field without a dynamic field", "nope > 1", noDynamicColl(), []string{"topk", "10"}},
		{"type mismatch", `n == "a"`, parseColl(), []string{"topk", "10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := searchReq(t, tc.params...)
			req.Dsl = tc.filter
			_, err := parseSearch(tc.col, req, testEnv())
			require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
			require.Contains(t, err.Error(), "failed to create query plan: ")
		})
	}
	req := searchReq(t, "topk", "10")
	req.Dsl = "n > 1"
	_, err := parseSearch(parseColl(), req, testEnv())
	require.NoError(t, err, "the same filter on the same schema compiles")
}

func noVectorColl() *catalog.Collection {
	c := parseColl()
	c.Schema.Fields = []*schemapb.FieldSchema{{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true}}
	return c
}

func noDynamicColl() *catalog.Collection { return withoutDynamic(parseColl()) }

// withoutDynamic drops c's dynamic field.
func withoutDynamic(c *catalog.Collection) *catalog.Collection {
	var fields []*schemapb.FieldSchema
	for _, f := range c.Schema.Fields {
		if !f.GetIsDynamic() {
			fields = append(fields, f)
		}
	}
	c.Schema.Fields, c.Schema.EnableDynamicField = fields, false
	return c
}

// keyColl makes n parseColl's partition key.
func keyColl() *catalog.Collection {
	c := parseColl()
	for _, f := range c.Schema.Fields {
		if f.GetName() == "n" {
			f.IsPartitionKey = true
		}
	}
	return c
}
