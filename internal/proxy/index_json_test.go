package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

func TestCheckJSONIndex(t *testing.T) {
	col := &catalog.Collection{Schema: &schemapb.CollectionSchema{EnableDynamicField: true, Fields: []*schemapb.FieldSchema{
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "doc", DataType: schemapb.DataType_JSON},
		{FieldID: 102, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
	}}}
	require.Nil(t, indexedField(col, "RowID"), "system fields are not indexable")
	require.Equal(t, "doc", indexedField(col, "doc").GetName())
	require.Equal(t, "$meta", indexedField(col, "my_key").GetName(), "an unknown name is a dynamic key")
	require.Equal(t, "$meta", indexedField(col, "$meta").GetName())

	for _, tc := range []struct {
		field, it string
		params    map[string]string
		name      string // default index name; "" = refused
		code      int32
		msg       string
	}{
		{"doc", "INVERTED", map[string]string{"json_cast_type": "double", "json_path": "doc['a']['b']"}, "doc/a/b", 0, ""},
		{"doc", "", map[string]string{"json_cast_type": "Json"}, "doc", 0, ""},
		{"doc", "AUTOINDEX", map[string]string{"json_cast_type": "varchar", "json_path": "doc['a'][0]"}, "doc/a/0", 0, ""},
		{"k", "INVERTED", map[string]string{"json_cast_type": "BOOL", "json_path": "k['a']"}, "$meta/k/a", 0, ""},
		{"k", "INVERTED", map[string]string{"json_cast_type": "bool"}, "$meta/k", 0, ""},
		{"$meta", "INVERTED", map[string]string{"json_cast_type": "double", "json_path": `$meta["year"]`}, "$meta/year", 0, ""},
		{
			"doc", "INVERTED", nil, "", errcode.IllegalArgument,
			"json index must specify cast type: missing parameter[missing_param=json_cast_type]: invalid parameter[expected=valid index params][actual=invalid index params]",
		},
		{
			"doc", "INVERTED",
			map[string]string{"json_cast_type": "INT64", "json_path": "doc['a']"},
			"", errcode.IllegalArgument,
			"json_cast_type INT64 is not supported",
		},
		{"doc", "INVERTED", map[string]string{"json_cast_type": "double", "json_path": "/"}, "", codePlainError, "cannot parse identifier: /"},
		{"doc", "INVERTED", map[string]string{"json_cast_type": "double", "json_path": "other['a']"}, "", errcode.IllegalArgument, "does not start with the field name doc"},
		{
			"doc", "STL_SORT",
			map[string]string{"json_cast_type": "double"},
			"", errcode.IllegalArgument,
			"STL_SORT are only supported on numeric, varchar or timestamptz field, got JSON: invalid parameter",
		},
		{"doc", "BITMAP", map[string]string{"json_cast_type": "double"}, "", errcode.IllegalArgument, "bitmap index are only supported on bool, int, string and array field"},
		{"doc", "TRIE", map[string]string{"json_cast_type": "double"}, "", errcode.IllegalArgument, "TRIE are only supported on varchar field"},
		{"doc", "12-s", map[string]string{"json_cast_type": "double"}, "", errcode.IllegalArgument, "invalid parameter[expected=valid index][actual=invalid index type: 12-s]"},
		{"doc", "HNSW", map[string]string{"json_cast_type": "double"}, "", errcode.IllegalArgument, "HNSW"},
	} {
		params := map[string]string{}
		for k, v := range tc.params {
			params[k] = v
		}
		_, name, err := checkJSONIndex(indexedField(col, tc.field), tc.field, tc.it, params)
		if tc.name != "" {
			require.NoError(t, err, "%s %v", tc.field, tc.params)
			require.Equal(t, tc.name, name)
			require.NotEmpty(t, params["json_path"], "json_path is filled in")
			require.Equal(t, tc.params["json_cast_type"], params["json_cast_type"], "the cast type is kept as given")
			continue
		}
		require.ErrorContains(t, err, tc.msg, "%s %s %v", tc.field, tc.it, tc.params)
		require.Equal(t, tc.code, errcode.CodeOf(err), tc.msg)
	}
}
