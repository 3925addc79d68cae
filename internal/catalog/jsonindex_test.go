package catalog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseJSONPath(t *testing.T) {
	for _, tc := range []struct {
		in        string
		root      string
		keys      []string
		static    string // pointer in a JSON field
		dynamicPt string // pointer in $meta
	}{
		{"my_json", "my_json", nil, "", "/my_json"},
		{"my_json['a']['b']", "my_json", []string{"a", "b"}, "/a/b", "/my_json/a/b"},
		{`my_json["a"][0]['b']`, "my_json", []string{"a", "0", "b"}, "/a/0/b", "/my_json/a/0/b"},
		{`j['x/y~z']`, "j", []string{"x/y~z"}, "/x~1y~0z", "/j/x~1y~0z"},
		{`j['it\'s']`, "j", []string{"it's"}, "/it's", "/j/it's"},
		{`$meta['year']`, "$meta", []string{"year"}, "/year", "/year"},
	} {
		p, err := ParseJSONPath(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.root, p.Root)
		require.Equal(t, tc.keys, p.Keys)
		require.Equal(t, tc.static, Pointer(p.Steps(false)), tc.in)
		require.Equal(t, tc.dynamicPt, Pointer(p.Steps(true)), tc.in)
	}
	for _, bad := range []string{"", "1", "1.0", "/", "j[", "j[a]", "j['a'", "j['a']x", "j[-1]", "[0]", "j b"} {
		_, err := ParseJSONPath(bad)
		require.Error(t, err, "%q", bad)
	}
}

func TestJSONIndexParamsEqual(t *testing.T) {
	a := map[string]string{"index_type": "INVERTED", "json_path": `j['a']`, "json_cast_type": "double"}
	require.True(t, JSONIndexParamsEqual(a, map[string]string{"index_type": "INVERTED", "json_path": `j["a"]`, "json_cast_type": "DOUBLE", "mmap.enabled": "true"}, false))
	require.False(t, JSONIndexParamsEqual(a, map[string]string{"index_type": "INVERTED", "json_path": `j['b']`, "json_cast_type": "double"}, false))
	require.False(t, JSONIndexParamsEqual(a, map[string]string{"index_type": "INVERTED", "json_path": `j['a']`, "json_cast_type": "varchar"}, false))
	require.False(t, JSONIndexParamsEqual(a, map[string]string{"index_type": "INVERTED", "json_path": `j['a']`}, false))
	require.True(t, JSONIndexParamsEqual(map[string]string{"index_type": "HNSW", "M": "16"}, map[string]string{"index_type": "HNSW", "M": "16"}, false))
	require.False(t, JSONIndexParamsEqual(map[string]string{"index_type": "HNSW", "M": "16"}, map[string]string{"index_type": "HNSW", "M": "32"}, false))
}
