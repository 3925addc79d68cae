package colfile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"strconv"
	"testing"
	"unsafe"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/indexfile"
)

// encode writes c and returns the file copied to an 8-aligned buffer at
// byte offset shift, as a mapping would hold it.
func encode(t *testing.T, c column.Column, shift int) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, c))
	back := make([]uint64, buf.Len()/8+2)
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(back))), 8*len(back))
	out := all[shift : shift+buf.Len()]
	copy(out, buf.Bytes())
	return out
}

// TestRoundTrip: every supported column reads back equal, in place in the
// mapping when aligned and copied when not; the documented header is
// where it says.
func TestRoundTrip(t *testing.T) {
	cols := []column.Column{
		&column.Bools{Data: []bool{true, false, true}},
		&column.Ints{T: schemapb.DataType_Int32, Data: []int64{-1, 0, math.MaxInt64}},
		&column.Floats{T: schemapb.DataType_Double, Data: []float64{1.5, math.Inf(-1), math.Copysign(0, -1)}},
		&column.FloatVectors{Dim: 2, Data: []float32{1, 2, 3, 4, float32(math.NaN()), -0}},
		&column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2, Data: []byte{1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cols {
		want, err := column.New(&schemapb.FieldSchema{DataType: c.Type(), TypeParams: dimParams(c)})
		require.NoError(t, err)
		for _, shift := range []int{0, 1, 4} {
			data := encode(t, c, shift)
			require.Equal(t, "STRCOL\x00\x00", string(data[:8]))
			require.Equal(t, uint64(3), binary.LittleEndian.Uint64(data[32:]), "rows at offset 32")
			got, err := Read(&indexfile.Mapped{Data: data}, want, 3)
			require.NoError(t, err, "%T", c)
			require.Equal(t, 3, got.Len())
			switch g := got.(type) {
			case *column.Ints:
				require.Equal(t, c.(*column.Ints).Data, g.Data)
				require.Equal(t, shift == 0, unsafe.Pointer(&g.Data[0]) == unsafe.Pointer(&data[48]), "in place iff aligned")
			case *column.Floats:
				for i, v := range c.(*column.Floats).Data {
					require.Equal(t, math.Float64bits(v), math.Float64bits(g.Data[i]))
				}
			case *column.FloatVectors:
				for i, v := range c.(*column.FloatVectors).Data {
					require.Equal(t, math.Float32bits(v), math.Float32bits(g.Data[i]))
				}
				require.Equal(t, shift%4 == 0, unsafe.Pointer(&g.Data[0]) == unsafe.Pointer(&data[48]))
			default:
				require.Equal(t, c, got)
			}
		}
	}
	require.False(t, Supports(&column.Ints{Nulls: column.Nulls{Valid: []bool{true}}, Data: []int64{1}}))
	require.False(t, Supports(&column.Strings{Data: []string{"a"}}))
	require.Error(t, Write(&bytes.Buffer{}, &column.Strings{Data: []string{"a"}}))
}

// dimParams returns the type params giving c's dim.
func dimParams(c column.Column) []*commonpb.KeyValuePair {
	switch c := c.(type) {
	case *column.FloatVectors:
		return dim(c.Dim)
	case *column.ByteVectors:
		return dim(c.Dim)
	}
	return nil
}

// TestRejects: a damaged byte fails the checksum, a file of another shape
// (rows, type) is refused, and a Bool byte other than 0 or 1 is refused
// even with a matching checksum.
func TestRejects(t *testing.T) {
	ints := &column.Ints{T: schemapb.DataType_Int64, Data: []int64{1, 2, 3}}
	want := &column.Ints{T: schemapb.DataType_Int64}
	data := encode(t, ints, 0)
	data[50] ^= 1
	_, err := Read(&indexfile.Mapped{Data: data}, want, 3)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = Read(&indexfile.Mapped{Data: encode(t, ints, 0)}, want, 4)
	require.ErrorIs(t, err, ErrCorrupt, "rows differ")
	_, err = Read(&indexfile.Mapped{Data: encode(t, ints, 0)}, &column.Floats{T: schemapb.DataType_Double}, 3)
	require.ErrorIs(t, err, ErrCorrupt, "type differs")

	data = encode(t, &column.Bools{Data: []bool{true, false}}, 0)
	data[49] = 2
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], crc32.MakeTable(crc32.Castagnoli)))
	_, err = Read(&indexfile.Mapped{Data: data}, &column.Bools{}, 2)
	require.ErrorIs(t, err, ErrCorrupt)
}

// dim is the type params of a vector field of dimension d.
func dim(d int) []*commonpb.KeyValuePair {
	return []*commonpb.KeyValuePair{{Key: "dim", Value: strconv.Itoa(d)}}
}
