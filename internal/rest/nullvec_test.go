package rest

import (
	"encoding/json"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestNullableVectorRows(t *testing.T) {
	f := &schemapb.FieldSchema{
		FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector, Nullable: true,
		TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
	}
	rows := []map[string]any{{"v": []any{json.Number("1"), json.Number("2")}}, {"v": nil}, {}, {"v": []any{json.Number("5"), json.Number("6")}}}
	fd, err := buildColumn(f, rows)
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, false, true}, fd.GetValidData())
	c, err := column.FromFieldData(f, fd)
	require.NoError(t, err)
	require.Equal(t, 4, c.Len())

	// Results carry the vectors compacted; rows map them back by position.
	out := column.ToFieldData("v", 101, c)
	require.Equal(t, 4, fieldLen(out))
	got, err := columnsToRows([]*schemapb.FieldData{out}, 4, false)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 2}, got[0]["v"])
	require.Nil(t, got[1]["v"])
	require.Nil(t, got[2]["v"])
	require.Equal(t, []float64{5, 6}, got[3]["v"])
}
