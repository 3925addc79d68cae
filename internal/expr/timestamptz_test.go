package expr

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestTimestamptzFilters(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "ts", DataType: schemapb.DataType_Timestamptz, Nullable: true},
	}}
	micros := func(s string) int64 {
		v, err := column.ParseTimestamptz(s, "UTC")
		require.NoError(t, err)
		return v
	}
	b := &mapBatch{n: 4, cols: map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: []int64{0, 1, 2, 3}},
		101: &column.Ints{
			T: schemapb.DataType_Timestamptz, Nulls: column.Nulls{Valid: []bool{true, true, true, false}},
			Data: []int64{micros("1970-01-01T00:00:00Z"), micros("2024-12-31T22:00:00Z"), micros("9999-12-31T23:46:05Z"), 0},
		},
	}}
	for _, tc := range []struct {
		filter, tz string
		want       []bool
	}{
		{"ts == ISO '2024-12-31T22:00:00Z'", "", []bool{false, true, false, false}},
		{"ts == ISO '2025-01-01 06:00:00'", "Asia/Shanghai", []bool{false, true, false, false}},
		{"ts == ISO '2025-01-01 06:00:00'", "", []bool{false, false, false, false}},
		{"ts >= ISO '2025-05-30T23:46:05+05:30'", "", []bool{false, false, true, false}},
		{"ts != ISO '9999-12-31T23:46:05Z'", "", []bool{true, true, false, false}},
		{"ISO '2000-01-01T00:00:00Z' < ts", "", []bool{false, true, true, false}},
		{"ts - INTERVAL 'P3D' >= ISO '1970-01-01T00:00:00Z'", "", []bool{false, true, true, false}},
		{"ts + interval 'PT1H30M' > iso '1970-01-01T01:29:59Z'", "", []bool{true, true, true, false}},
		{"ts is null", "", []bool{false, false, false, true}},
	} {
		e, err := CompileTZ(tc.filter, schema, nil, tc.tz)
		require.NoError(t, err, tc.filter)
		got, err := e.Eval(b)
		require.NoError(t, err, tc.filter)
		require.Equal(t, tc.want, got, tc.filter)
	}
	for _, bad := range []string{"ts > ISO 'yesterday'", "ts - INTERVAL 'P1M' > ISO '2020-01-01T00:00:00Z'", "ts > INTERVAL 'P'"} {
		_, err := CompileTZ(bad, schema, nil, "UTC")
		require.Error(t, err, bad)
	}
}

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]int64{
		"P3D": 3 * 86400e6, "PT1H": 3600e6, "P1W": 7 * 86400e6, "PT1.5S": 1.5e6, "P1DT2H3M4S": (86400 + 7200 + 180 + 4) * 1e6,
	} {
		got, err := parseISODuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "P", "3D", "P1Y", "P1M", "PT", "P1H", "PTD"} {
		_, err := parseISODuration(bad)
		require.Error(t, err, bad)
	}
}
