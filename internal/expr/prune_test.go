package expr

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestMayMatchRange(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "k", DataType: schemapb.DataType_Int64},
		{FieldID: 102, Name: "s", DataType: schemapb.DataType_VarChar, TypeParams: nil},
		{FieldID: 103, Name: "x", DataType: schemapb.DataType_Double},
	}}
	cases := []struct {
		src    string
		lo, hi any
		want   bool
	}{
		{"k == 5", int64(0), int64(10), true},
		{"k == 15", int64(0), int64(10), false},
		{"k > 10", int64(0), int64(10), false},
		{"k >= 10", int64(0), int64(10), true},
		{"k < 0", int64(0), int64(10), false},
		{"k <= 0", int64(0), int64(10), true},
		{"1 < k <= 3", int64(5), int64(10), false},
		{"1 < k <= 7", int64(5), int64(10), true},
		{"k in [20, 30]", int64(0), int64(10), false},
		{"k in [20, 3]", int64(0), int64(10), true},
		{"k > 20 or k < 1", int64(5), int64(10), false},
		{"k > 20 or id > 1", int64(5), int64(10), true},
		{"k > 20 and id > 1", int64(5), int64(10), false},
		{"not (k > 20)", int64(5), int64(10), true},
		{"id > 20", int64(5), int64(10), true},
		{"k > 9.5", int64(0), int64(9), false},
		{`s == "m"`, "a", "c", false},
		{`s >= "b"`, "a", "c", true},
		{"x < 1.5", 2.0, 3.0, false},
		{"", int64(0), int64(1), true},
	}
	for _, tc := range cases {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, schema, nil)
			require.NoError(t, err)
			fid := int64(101)
			switch tc.lo.(type) {
			case string:
				fid = 102
			case float64:
				fid = 103
			}
			require.Equal(t, tc.want, e.MayMatchRange(fid, tc.lo, tc.hi))
		})
	}
}
