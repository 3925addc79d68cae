package column

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
)

func TestConcat(t *testing.T) {
	ints := func(v ...int64) *Ints { return &Ints{T: schemapb.DataType_Int64, Data: v} }
	single := ints(1, 2)
	require.Same(t, single, Concat([]Column{single}), "one part is returned as is")
	require.Nil(t, Concat(nil))

	got := Concat([]Column{ints(1, 2), ints(), ints(3)}).(*Ints)
	require.Equal(t, []int64{1, 2, 3}, got.Data)
	require.Equal(t, len(got.Data), cap(got.Data), "allocated at its final size")
	require.Equal(t, schemapb.DataType_Int64, got.T)

	vecs := Concat([]Column{&FloatVectors{Dim: 2, Data: []float32{1, 2}}, &FloatVectors{Dim: 2, Data: []float32{3, 4, 5, 6}}}).(*FloatVectors)
	require.Equal(t, 3, vecs.Len())
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, vecs.Data)
	require.Equal(t, len(vecs.Data), cap(vecs.Data))

	// Null masks follow the rows, also when only a later part has one.
	strs := Concat([]Column{&Strings{Data: []string{"a"}}, &Strings{Nulls: Nulls{Valid: []bool{false, true}}, Data: []string{"", "c"}}}).(*Strings)
	require.Equal(t, []string{"a", "", "c"}, strs.Data)
	require.Equal(t, []bool{true, false, true}, strs.Valid)

	// Other types are concatenated through an empty column of the same shape.
	js := Concat([]Column{&JSONs{Data: [][]byte{[]byte(`1`)}}, &JSONs{Data: [][]byte{[]byte(`2`)}}}).(*JSONs)
	require.Equal(t, [][]byte{[]byte(`1`), []byte(`2`)}, js.Data)
}
