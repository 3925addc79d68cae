package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/registry"
)

// TestRegistryMetricsMatchMetricFits keeps the metrics each index type
// lists in step with the metrics the proxy lets fields of its data types
// use.
func TestRegistryMetricsMatchMetricFits(t *testing.T) {
	all := []string{"L2", "IP", "COSINE", "HAMMING", "JACCARD"}
	for _, tp := range registry.Types() {
		if tp.Family != registry.Dense && tp.Family != registry.Binary {
			continue
		}
		for _, dt := range tp.Fields {
			if dt == schemapb.DataType_ArrayOfVector {
				continue // embedding lists take MAX_SIM metrics: checkEmbListIndex
			}
			for _, m := range all {
				require.Equal(t, metricFits(dt, m), tp.AllowsMetric(m), "%s on %s with %s", tp.Name, dt, m)
			}
		}
	}
}

// TestVectorIndexParamsThroughRegistry checks CreateIndex's vector-index
// validation as the registry drives it: every type's parameters are
// checked, HNSW's included, and quoted integers pass.
func TestVectorIndexParamsThroughRegistry(t *testing.T) {
	f32 := vecField(schemapb.DataType_FloatVector, "8")
	for _, tc := range []struct {
		it     string
		params map[string]string
		err    string
	}{
		{"HNSW", map[string]string{"M": `"16"`, "efConstruction": `"64"`}, ""},
		{"HNSW", map[string]string{"M": "4096"}, "param 'M' (4096) should be in range [2, 2048]"},
		{"IVF_FLAT", map[string]string{"nlist": `"128"`}, ""},
		{"IVF_SQ8", map[string]string{"nlist": "-1"}, "nlist"},
		{"DISKANN", map[string]string{"search_list": "x"}, ""},
		{"EMB_LIST_HNSW", map[string]string{}, "invalid index type: EMB_LIST_HNSW"},
		{"INVERTED", map[string]string{}, "index type INVERTED is for scalar fields"},
		{"RTREE", map[string]string{}, "invalid index type: RTREE"},
		{"hnsw", map[string]string{}, "invalid index type: hnsw"},
	} {
		t.Run(tc.it, func(t *testing.T) {
			_, err := vectorIndexMetric(f32, tc.it, tc.params)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
	_, err := vectorIndexMetric(vecField(schemapb.DataType_BinaryVector, "64"), "IVF_FLAT", map[string]string{})
	require.ErrorContains(t, err, "supported: [BIN_FLAT BIN_IVF_FLAT AUTOINDEX]")
}
