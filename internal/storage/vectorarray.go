package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/column"
)

// buildVectorArrays encodes an ArrayOfVector column (the vector sub-field
// of an Array of Structs field) as a Binary payload: each row is one
// protobuf schemapb.VectorField {dim, float_vector} holding the row's
// vectors back to back, as Array rows are protobuf ScalarFields.
func buildVectorArrays(mem memory.Allocator, c *column.VectorArrays, valid []bool) (arrow.Array, error) {
	rows := make([][]byte, len(c.Data))
	for i, r := range c.Data {
		if !validAt(valid, i) {
			continue
		}
		b, err := proto.Marshal(&schemapb.VectorField{
			Dim:  int64(c.Dim),
			Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: r}},
		})
		if err != nil {
			return nil, fmt.Errorf("storage: marshal vector array row %d: %w", i, err)
		}
		rows[i] = b
	}
	return buildBinary(mem, rows, valid), nil
}

// appendVectorArrays decodes the rows of buildVectorArrays into c.
func appendVectorArrays(c *column.VectorArrays, arr arrow.Array, h decodeHint) error {
	appendValidity(&c.Nulls, len(c.Data), arr, h.nullable)
	return appendBinaryRows(arr, func(b []byte, null bool) error {
		if null {
			c.Data = append(c.Data, nil)
			return nil
		}
		vf := &schemapb.VectorField{}
		if err := proto.Unmarshal(b, vf); err != nil {
			return fmt.Errorf("%w: vector array row: %w", ErrCorrupt, err)
		}
		if c.Dim == 0 {
			c.Dim = int(vf.GetDim())
		}
		data := vf.GetFloatVector().GetData()
		if int(vf.GetDim()) != c.Dim || c.Dim <= 0 || len(data)%c.Dim != 0 {
			return fmt.Errorf("%w: vector array row of %d floats, dim %d (column dim %d)", ErrCorrupt, len(data), vf.GetDim(), c.Dim)
		}
		c.Data = append(c.Data, data)
		return nil
	})
}
