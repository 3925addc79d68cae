package column

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/index/distance"
)

// WidenFunc returns the decoder that widens one Float16Vector,
// BFloat16Vector or Int8Vector value of type t (its little-endian bytes) to
// float32, or nil for any other type. Exact search and the float indexes use
// it to read the compact columns as float32, one row at a time.
func WidenFunc(t schemapb.DataType) func(dst []float32, src []byte) {
	switch t {
	case schemapb.DataType_Float16Vector:
		return distance.DecodeFloat16
	case schemapb.DataType_BFloat16Vector:
		return distance.DecodeBFloat16
	case schemapb.DataType_Int8Vector:
		return distance.DecodeInt8
	}
	return nil
}

// Widen returns the rows of a Float16Vector, BFloat16Vector or Int8Vector
// column decoded to a float32 column, or nil for other types.
func (c *ByteVectors) Widen() *FloatVectors {
	decode := WidenFunc(c.T)
	if decode == nil {
		return nil
	}
	n := c.Len()
	out := &FloatVectors{Dim: c.Dim, Data: make([]float32, n*c.Dim)}
	for i := range n {
		decode(out.Data[i*c.Dim:(i+1)*c.Dim], c.Row(i))
	}
	return out
}
