package importer

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
)

// structBuilder collects an Array of Structs field's values: each row is a
// list of objects, one key per sub-field (JSON: a list of objects; Parquet:
// a list of structs). The proxy splits the struct column it sends into the
// sub-field columns, as for an insert.
type structBuilder struct {
	sa   *schemapb.StructArrayFieldSchema
	cols []column.Column // per sub-field: Arrays or VectorArrays
}

func newStructBuilder(sa *schemapb.StructArrayFieldSchema) (*structBuilder, error) {
	b := &structBuilder{sa: sa}
	for _, f := range sa.GetFields() {
		c, err := column.New(f)
		if err != nil {
			return nil, fmt.Errorf("field %q of struct array field %s: %w", f.GetName(), sa.GetName(), err)
		}
		b.cols = append(b.cols, c)
	}
	return b, nil
}

// add appends one row: a list of struct elements.
func (b *structBuilder) add(v any) error {
	var elems []any
	switch x := v.(type) {
	case nil:
		return fmt.Errorf("struct array field %s does not support null values", b.sa.GetName())
	case []any:
		elems = x
	default:
		return fmt.Errorf("struct array field %s: %s is not a list of structs", b.sa.GetName(), show(v))
	}
	for k, f := range b.sa.GetFields() {
		vals := make([]any, len(elems))
		for i, e := range elems {
			m, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("struct array field %s: element %d is not an object", b.sa.GetName(), i)
			}
			vals[i] = m[f.GetName()]
			if vals[i] == nil {
				return fmt.Errorf("struct array field %s: element %d has no %q", b.sa.GetName(), i, f.GetName())
			}
		}
		switch c := b.cols[k].(type) {
		case *column.VectorArrays:
			var row []float32
			for i, x := range vals {
				vec, err := floatVector(x, c.Dim)
				if err != nil {
					return fmt.Errorf("field %q of struct array field %s, element %d: %w", f.GetName(), b.sa.GetName(), i, err)
				}
				row = append(row, vec...)
			}
			c.Data = append(c.Data, row)
		default:
			sf, err := arrayValue(f, vals)
			if err != nil {
				return fmt.Errorf("field %q of struct array field %s: %w", f.GetName(), b.sa.GetName(), err)
			}
			if err := column.AppendValue(c, sf); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldData returns the struct column as the wire carries it.
func (b *structBuilder) fieldData() *schemapb.FieldData {
	subs := make([]*schemapb.FieldData, len(b.cols))
	for k, f := range b.sa.GetFields() {
		subs[k] = column.ToFieldData(f.GetName(), f.GetFieldID(), b.cols[k])
	}
	return &schemapb.FieldData{
		Type: schemapb.DataType_ArrayOfStruct, FieldName: b.sa.GetName(), FieldId: b.sa.GetFieldID(),
		Field: &schemapb.FieldData_StructArrays{StructArrays: &schemapb.StructArrayField{Fields: subs}},
	}
}
