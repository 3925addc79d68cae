package column

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// Fillable reports whether rows may lack field f: it is nullable, has a
// default value, or is the dynamic field. Such a field may be missing from an insert, and from the
// binlogs of a segment written before the field was added to the schema
// (AddCollectionField); readers then see Fill's rows.
func Fillable(f *schemapb.FieldSchema) bool {
	return f.GetFieldID() >= 100 && (f.GetNullable() || f.GetDefaultValue() != nil || f.GetIsDynamic())
}

// Fill returns n rows of field f that hold no value: the field's default
// value when it has one, else null; for the dynamic field `$meta`, enabled
// after the rows were written, empty objects. It is the one rule for rows
// that lack a fillable field (see Fillable), wherever they are read.
func Fill(f *schemapb.FieldSchema, n int) (Column, error) {
	if f.GetIsDynamic() {
		d := make([][]byte, n)
		for i := range d {
			d[i] = []byte("{}")
		}
		return &JSONs{Data: d}, nil
	}
	c, err := New(f)
	if err != nil {
		return nil, err
	}
	valid := make([]bool, n)
	switch c := c.(type) {
	case *Bools:
		c.Data, c.Valid = make([]bool, n), valid
	case *Ints:
		c.Data, c.Valid = make([]int64, n), valid
	case *Floats:
		c.Data, c.Valid = make([]float64, n), valid
	case *Strings:
		c.Data, c.Valid = make([]string, n), valid
	case *JSONs:
		c.Data, c.Valid = make([][]byte, n), valid
	case *Geometries:
		c.Data, c.Valid = make([][]byte, n), valid
	case *Arrays:
		c.Data, c.Valid = make([]*schemapb.ScalarField, n), valid
	case *FloatVectors: // nullable vectors: zero-filled slots, all invalid
		c.Data, c.Valid = make([]float32, n*c.Dim), valid
	case *ByteVectors:
		c.Data, c.Valid = make([]byte, n*c.Width), valid
	case *SparseVectors:
		c.Data, c.Valid = make([][]byte, n), valid
	default:
		return nil, fmt.Errorf("column: field %q of type %s cannot hold nulls", f.GetName(), f.GetDataType())
	}
	return FillDefaults(f, c)
}

// FillDefaults replaces the nulls of c with field f's default value, if it
// has one (c is changed in place and returned). A nullable field keeps its
// mask, now all valid; a non-nullable one loses it.
func FillDefaults(f *schemapb.FieldSchema, c Column) (Column, error) {
	dv := f.GetDefaultValue()
	valid := c.Validity()
	if dv == nil || valid == nil {
		return c, nil
	}
	for i, ok := range valid {
		if ok {
			continue
		}
		switch c := c.(type) {
		case *Bools:
			c.Data[i] = dv.GetBoolData()
		case *Ints:
			switch f.GetDataType() {
			case schemapb.DataType_Timestamptz:
				c.Data[i] = dv.GetTimestamptzData()
			case schemapb.DataType_Int64:
				c.Data[i] = dv.GetLongData()
			default:
				c.Data[i] = int64(dv.GetIntData())
			}
		case *Floats:
			if f.GetDataType() == schemapb.DataType_Double {
				c.Data[i] = dv.GetDoubleData()
			} else {
				c.Data[i] = float64(dv.GetFloatData())
			}
		case *Strings:
			c.Data[i] = dv.GetStringData()
		case *JSONs:
			c.Data[i] = dv.GetBytesData()
		case *Geometries:
			b, err := ParseWKT(dv.GetStringData())
			if err != nil {
				return nil, fmt.Errorf("field %q: invalid default value for geometry field: %w", f.GetName(), err)
			}
			c.Data[i] = b
		default:
			return nil, fmt.Errorf("field %q: default values are not supported for %s", f.GetName(), f.GetDataType())
		}
	}
	// Every row holds a value now; nullable fields keep the mask (all valid).
	if nc, ok := c.(interface{ nulls() *Nulls }); ok {
		n := nc.nulls()
		n.Valid = allValid(n.Valid, f)
	}
	return c, nil
}

func allValid(v []bool, f *schemapb.FieldSchema) []bool {
	if !f.GetNullable() {
		return nil
	}
	for i := range v {
		v[i] = true
	}
	return v
}
