package column

import (
	"encoding/binary"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// AppendValue appends one row holding v, a Go value of c's element type:
// bool (Bools), int64 (Ints), float64 (Floats), string (Strings), []byte
// holding a JSON document (JSONs), *schemapb.ScalarField (Arrays), []float32
// of Dim values (FloatVectors), []byte of Width bytes (ByteVectors) or an
// encoded sparse row (SparseVectors, whose Dim grows to cover it). A nil v
// appends the type's zero slot, as a null row has; the validity mask is
// left to the caller (SetValidity). Other column types, and values of
// another type or size, are an error.
func AppendValue(c Column, v any) error {
	switch c := c.(type) {
	case *Bools:
		return appendTyped(&c.Data, v)
	case *Ints:
		return appendTyped(&c.Data, v)
	case *Floats:
		return appendTyped(&c.Data, v)
	case *Strings:
		return appendTyped(&c.Data, v)
	case *JSONs:
		return appendTyped(&c.Data, v)
	case *Arrays:
		if v == nil {
			v = &schemapb.ScalarField{}
		}
		return appendTyped(&c.Data, v)
	case *FloatVectors:
		return appendRow(&c.Data, v, c.Dim)
	case *ByteVectors:
		return appendRow(&c.Data, v, c.Width)
	case *SparseVectors:
		if err := appendTyped(&c.Data, v); err != nil {
			return err
		}
		c.Dim = max(c.Dim, sparseRowDim(c.Data[len(c.Data)-1]))
		return nil
	}
	return fmt.Errorf("column: appending values to a %s column is not supported", c.Type())
}

// SetValidity sets c's validity mask (nil: every row holds a value); it
// must have one entry per row.
func SetValidity(c Column, valid []bool) {
	if n, ok := c.(interface{ nulls() *Nulls }); ok {
		n.nulls().Valid = valid
	}
}

// appendTyped appends v, which must be a T or nil (T's zero value), to data.
func appendTyped[T any](data *[]T, v any) error {
	var x T
	if v != nil {
		var ok bool
		if x, ok = v.(T); !ok {
			return fmt.Errorf("column: a %T value cannot be appended to a column of %T", v, x)
		}
	}
	*data = append(*data, x)
	return nil
}

// appendRow appends one fixed-width row of w elements, v or zeros for nil.
func appendRow[T any](data *[]T, v any, w int) error {
	if v == nil {
		*data = append(*data, make([]T, w)...)
		return nil
	}
	row, ok := v.([]T)
	if !ok || len(row) != w {
		return fmt.Errorf("column: a %T value of length %d cannot be appended as a row of %d", v, len(row), w)
	}
	*data = append(*data, row...)
	return nil
}

// sparseRowDim is the dimension of an encoded sparse row (ascending
// indices): its largest index plus one, 0 when empty.
func sparseRowDim(row []byte) int64 {
	if len(row) < 8 {
		return 0
	}
	return int64(binary.LittleEndian.Uint32(row[len(row)/8*8-8:])) + 1
}
