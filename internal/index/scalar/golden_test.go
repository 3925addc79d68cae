package scalar

import (
	"context"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/indextest"
)

// TestMarshalGolden pins the file format: fixed small indexes of every key
// type marshal to the bytes of their testdata golden files, which still load.
func TestMarshalGolden(t *testing.T) {
	ints := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{5, -3, 5, 9, 0, -3}}
	ints.Valid = []bool{true, true, true, false, true, true}
	arr := &column.Arrays{Elem: schemapb.DataType_Int32, Data: []*schemapb.ScalarField{
		{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{1, 2, 2}}}},
		{Data: &schemapb.ScalarField_IntData{IntData: &schemapb.IntArray{Data: []int32{2, 3}}}},
	}}
	for _, tc := range []struct {
		name string
		kind Kind
		col  column.Column
	}{
		{"ints.golden", Inverted, ints},
		{"floats.golden", Sort, &column.Floats{T: schemapb.DataType_Double, Data: []float64{1.5, -2, 1.5, 3.25}}},
		{"strings.golden", Trie, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"b", "a", "b", "", "cde"}}},
		{"bools.golden", Bitmap, &column.Bools{Data: []bool{true, false, true}}},
		{"array.golden", Inverted, arr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := Build(context.Background(), tc.kind, tc.col)
			require.NoError(t, err)
			back := indextest.MarshalGolden(t, tc.name, x, Unmarshal)
			require.Equal(t, x, back)
		})
	}
}
