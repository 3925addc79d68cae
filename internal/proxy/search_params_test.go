package proxy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

// indexEnv is a loaded collection whose vector field v has an index of
// type it (no metric fixed).
func indexEnv(it string) readEnv {
	idx := openIndexes()
	for i := range idx {
		if idx[i].FieldID == 101 {
			idx[i].Params = map[string]string{"index_type": it}
		}
	}
	return readEnv{indexes: idx, loaded: true, now: parseNow, staleness: 5 * time.Second}
}

// TestParseSearchIndexParamsRefused: an index search parameter of the
// wrong type or out of its range is refused with Milvus's message (the
// value printed as the client wrote it: 32.0, true, null, [32]) and the
// code Milvus's client suite shows for the index type: 65535 on HNSW_SQ
// (test_hnsw_sq.py), 999 on HNSW and IVF_RABITQ (test_hnsw.py,
// test_ivf_rabitq.py).
func TestParseSearchIndexParamsRefused(t *testing.T) {
	const maxF32 = "340282346638528859811704183484516925440.000000"
	topk10 := []string{"topk", "10"}
	for _, tc := range []struct {
		name, index, params string
		req                 []string // the other search parameters
		code                int32
		msg                 string
	}{
		// test_hnsw_sq.py, TestHnswSQSearchParams.
		{"hnsw_sq ef below k", "HNSW_SQ", `{"ef": 1}`, topk10, 65535, "ef(1) should be larger than k(10)"},
		{"hnsw_sq ef negative", "HNSW_SQ", `{"ef": -1}`, topk10, 65535, "Out of range in json: param 'ef' (-1) should be in range [1, 2147483647]"},
		{"hnsw_sq ef float", "HNSW_SQ", `{"ef": 32.0}`, topk10, 65535, "Type conflict in json: param 'ef' (32.0) should be integer"},
		{"hnsw_sq ef bool", "HNSW_SQ", `{"ef": true}`, topk10, 65535, "Type conflict in json: param 'ef' (true) should be integer"},
		{"hnsw_sq ef null", "HNSW_SQ", `{"ef": null}`, topk10, 65535, "Type conflict in json: param 'ef' (null) should be integer"},
		{"hnsw_sq ef list", "HNSW_SQ", `{"ef": [32]}`, topk10, 65535, "Type conflict in json: param 'ef' ([32]) should be integer"},
		{"hnsw_sq refine_k 0", "HNSW_SQ", `{"refine_k": 0}`, topk10, 65535, "Out of range in json: param 'refine_k' (0) should be in range [1.000000, " + maxF32 + "]"},
		{"hnsw_sq refine_k empty", "HNSW_SQ", `{"refine_k": ""}`, topk10, 65535, "invalid float value, key: 'refine_k', value: ''"},
		{"hnsw_sq refine_k bool", "HNSW_SQ", `{"refine_k": true}`, topk10, 65535, "Type conflict in json: param 'refine_k' (true) should be a number"},
		{"hnsw_sq refine_k list", "HNSW_SQ", `{"refine_k": [15]}`, topk10, 65535, "Type conflict in json: param 'refine_k' ([15]) should be a number"},
		{"hnsw_sq valid ef, bad refine_k", "HNSW_SQ", `{"ef": 64, "refine_k": 0}`, topk10, 65535, "Out of range in json: param 'refine_k' (0) should be in range [1.000000, " + maxF32 + "]"},
		// test_hnsw.py: the same checks, code 999.
		{"hnsw ef float", "HNSW", `{"ef": 32.0}`, topk10, 999, "Type conflict in json: param 'ef' (32.0) should be integer"},
		{"hnsw ef not a number", "HNSW", `{"ef": "many"}`, topk10, 999, "invalid integer value, key: 'ef', value: 'many'"},
		{"hnsw ef beyond int32", "HNSW", `{"ef": 2147483648}`, topk10, 999, "Out of range in json: param 'ef' (2147483648) should be in range [1, 2147483647]"},
		{"hnsw ef beyond int64", "HNSW", `{"ef": 1e30}`, topk10, 999, "Type conflict in json: param 'ef' (1e30) should be integer"},
		{"hnsw ef below topk+offset", "HNSW", `{"ef": 12}`, []string{"topk", "10", "offset", "5"}, 999, "ef(12) should be larger than k(15)"},
		{
			"hnsw ef below the iterator batch", "HNSW", `{"ef": 12}`,
			[]string{"topk", "10", "iterator", "true", "search_iter_v2", "true", "search_iter_batch_size", "20"},
			999, "ef(12) should be larger than k(20)",
		},
		// test_ivf_rabitq.py, TestIvfRabitqSearchParams.
		{"rabitq nprobe too large", "IVF_RABITQ", `{"nprobe": 65537}`, topk10, 999, "Out of range in json: param 'nprobe' (65537) should be in range [1, 65536]"},
		{"rabitq nprobe negative", "IVF_RABITQ", `{"nprobe": -1}`, topk10, 999, "Out of range in json: param 'nprobe' (-1) should be in range [1, 65536]"},
		{"rabitq nprobe float", "IVF_RABITQ", `{"nprobe": 32.0}`, topk10, 999, "Type conflict in json: param 'nprobe' (32.0) should be integer"},
		{"rabitq nprobe bool", "IVF_RABITQ", `{"nprobe": true}`, topk10, 999, "Type conflict in json: param 'nprobe' (true) should be integer"},
		{"rabitq nprobe null", "IVF_RABITQ", `{"nprobe": null}`, topk10, 999, "Type conflict in json: param 'nprobe' (null) should be integer"},
		{"rabitq rbq_bits_query 9", "IVF_RABITQ", `{"rbq_bits_query": 9}`, topk10, 999, "Out of range in json: param 'rbq_bits_query' (9) should be in range [0, 8]"},
		{"rabitq rbq_bits_query -1", "IVF_RABITQ", `{"rbq_bits_query": -1}`, topk10, 999, "Out of range in json: param 'rbq_bits_query' (-1) should be in range [0, 8]"},
		{"rabitq rbq_bits_query float", "IVF_RABITQ", `{"rbq_bits_query": 6.0}`, topk10, 999, "Type conflict in json: param 'rbq_bits_query' (6.0) should be integer"},
		{"rabitq rbq_bits_query bool", "IVF_RABITQ", `{"rbq_bits_query": true}`, topk10, 999, "Type conflict in json: param 'rbq_bits_query' (true) should be integer"},
		{"rabitq rbq_bits_query null", "IVF_RABITQ", `{"rbq_bits_query": null}`, topk10, 999, "Type conflict in json: param 'rbq_bits_query' (null) should be integer"},
		{"rabitq refine_k 0.5", "IVF_RABITQ", `{"refine_k": 0.5}`, topk10, 999, "Out of range in json: param 'refine_k' (0.5) should be in range [1.000000, " + maxF32 + "]"},
		{"rabitq refine_k -1.0", "IVF_RABITQ", `{"refine_k": -1.0}`, topk10, 999, "Out of range in json: param 'refine_k' (-1.0) should be in range [1.000000, " + maxF32 + "]"},
		{"rabitq refine_k bool", "IVF_RABITQ", `{"refine_k": true}`, topk10, 999, "Type conflict in json: param 'refine_k' (true) should be a number"},
		{"rabitq refine_k null", "IVF_RABITQ", `{"refine_k": null}`, topk10, 999, "Type conflict in json: param 'refine_k' (null) should be a number"},
		// DISKANN's search_list, checked as ef is.
		{"diskann search_list below k", "DISKANN", `{"search_list": 5}`, topk10, 999, "search_list(5) should be larger than k(10)"},
		{"diskann search_list float", "DISKANN", `{"search_list": 32.0}`, topk10, 999, "Type conflict in json: param 'search_list' (32.0) should be integer"},
		{"diskann search_list zero", "DISKANN", `{"search_list": 0}`, topk10, 999, "Out of range in json: param 'search_list' (0) should be in range [1, 2147483647]"},
		// Not the index's parameters: still Strata's 1100 wording.
		{"radius not a number", "HNSW", `{"radius": "far"}`, topk10, errcode.IllegalArgument, "radius far is not a number"},
		{"params with trailing data", "HNSW", `{"ef": 64} x`, topk10, errcode.IllegalArgument, `search params "{\"ef\": 64} x" are not a JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := parseSearch(parseColl(), searchReq(t, append([]string{"params", tc.params}, tc.req...)...), indexEnv(tc.index))
			require.Error(t, err)
			require.Nil(t, sp)
			require.Equal(t, tc.code, errcode.CodeOf(err), err.Error())
			require.Equal(t, tc.msg, err.Error())
		})
	}
}

// TestParseGroupedSearchIgnoresK: a grouped search's ef and search_list
// may be below its limit, as Milvus's (an iterator there) accepts them
// (test_search_group_size: limit 50, DISKANN search_list 30).
func TestParseGroupedSearchIgnoresK(t *testing.T) {
	for index, params := range map[string]string{"DISKANN": `{"search_list": 30}`, "HNSW": `{"ef": 30}`} {
		sp, err := parseSearch(parseColl(), searchReq(t, "topk", "50", "group_by_field", "n", "group_size", "5", "params", params),
			indexEnv(index))
		require.NoError(t, err, index)
		require.Equal(t, 30, sp.sreq.Ef, index)
		_, err = parseSearch(parseColl(), searchReq(t, "topk", "50", "params", params), indexEnv(index))
		require.Error(t, err, "%s: ungrouped, the limit still bounds it", index)
	}
}

// TestParseSearchIndexParamsAccepted: the values Milvus accepts, strings
// holding numbers among them (Milvus does not check a string's type).
func TestParseSearchIndexParamsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name, index, params string
		check               func(t *testing.T, sp *searchPlan)
	}{
		{"ef equal to k", "HNSW_SQ", `{"ef": 10}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 10, sp.sreq.Ef) }},
		{"diskann search_list", "DISKANN", `{"search_list": 150}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 150, sp.sreq.Ef) }},
		{"search_list ignored off DISKANN", "HNSW", `{"search_list": 5}`, func(t *testing.T, sp *searchPlan) { require.Zero(t, sp.sreq.Ef) }},
		{"ef as a string", "HNSW_SQ", `{"ef": "32"}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 32, sp.sreq.Ef) }},
		{"ef large", "HNSW_SQ", `{"ef": 10000}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 10000, sp.sreq.Ef) }},
		{"refine_k fraction", "HNSW_SQ", `{"refine_k": 2.5}`, func(t *testing.T, sp *searchPlan) { require.InDelta(t, 2.5, sp.sreq.RefineK, 0) }},
		{"refine_k as a string", "HNSW_SQ", `{"refine_k": "2.5"}`, func(t *testing.T, sp *searchPlan) { require.InDelta(t, 2.5, sp.sreq.RefineK, 0) }},
		{"refine_k integer", "IVF_RABITQ", `{"refine_k": 2}`, func(t *testing.T, sp *searchPlan) { require.InDelta(t, 2.0, sp.sreq.RefineK, 0) }},
		{"nprobe bounds", "IVF_RABITQ", `{"nprobe": 65536}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 65536, sp.sreq.Nprobe) }},
		{"nprobe as a string", "IVF_RABITQ", `{"nprobe": "32"}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 32, sp.sreq.Nprobe) }},
		{"rbq_bits_query 0", "IVF_RABITQ", `{"rbq_bits_query": 0}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 0, sp.sreq.RbqBitsQuery) }},
		{"rbq_bits_query as a string", "IVF_RABITQ", `{"rbq_bits_query": "6"}`, func(t *testing.T, sp *searchPlan) { require.Equal(t, 6, sp.sreq.RbqBitsQuery) }},
		{"combination", "IVF_RABITQ", `{"nprobe": 32, "rbq_bits_query": 6, "refine_k": 2.0}`, func(t *testing.T, sp *searchPlan) {
			require.Equal(t, 32, sp.sreq.Nprobe)
			require.Equal(t, 6, sp.sreq.RbqBitsQuery)
			require.InDelta(t, 2.0, sp.sreq.RefineK, 0)
		}},
		{"empty", "HNSW_SQ", `{}`, func(t *testing.T, sp *searchPlan) { require.Zero(t, sp.sreq.Ef) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, err := parseSearch(parseColl(), searchReq(t, "topk", "10", "params", tc.params), indexEnv(tc.index))
			require.NoError(t, err)
			tc.check(t, sp)
		})
	}
}
