package importer

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// parquetSource is a column-based Parquet file: one column per field (its
// name the field's), as LocalBulkWriter writes it; vectors are lists,
// JSON and sparse vectors text.
type parquetSource struct {
	schema *schemapb.CollectionSchema
	names  []string
	cols   []arrow.Array
	rows   int
}

func newParquetSource(ctx context.Context, schema *schemapb.CollectionSchema, data []byte) (_ *parquetSource, err error) {
	defer func() {
		if r := recover(); r != nil { // arrow-go panics on some malformed files
			err = fmt.Errorf("not a valid Parquet file: %v", r)
		}
	}()
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not a valid Parquet file: %w", err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("not a valid Parquet file: %w", err)
	}
	tbl, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the Parquet file: %w", err)
	}
	defer tbl.Release()
	s := &parquetSource{schema: schema, rows: int(tbl.NumRows())}
	for i := 0; i < int(tbl.NumCols()); i++ {
		c := tbl.Column(i)
		name := c.Name()
		if f := fieldNamed(schema, name); f != nil && f.GetIsPrimaryKey() && f.GetAutoID() && c.Len() > 0 && c.Data().NullN() == c.Len() {
			continue // an all-null auto-ID key column: generated
		}
		arr, err := array.Concatenate(c.Data().Chunks(), memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", name, err)
		}
		s.names = append(s.names, name)
		s.cols = append(s.cols, arr)
	}
	if _, err := newBatch(schema, s.names); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

func (s *parquetSource) release() {
	for _, c := range s.cols {
		c.Release()
	}
	s.cols = nil
}

func (s *parquetSource) numRows() int { return s.rows }

func (s *parquetSource) read(lo, hi int) (*batch, error) {
	return fillColumns(s.schema, s.names, lo, hi, func(k, i int) (any, error) { return arrowValue(s.cols[k], i) })
}

// arrowValue returns element i of a as a file value (nil when null).
func arrowValue(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch x := a.(type) {
	case *array.Null: // a column all of whose values are null
		return nil, nil
	case *array.Boolean:
		return x.Value(i), nil
	case *array.Int8:
		return int64(x.Value(i)), nil
	case *array.Int16:
		return int64(x.Value(i)), nil
	case *array.Int32:
		return int64(x.Value(i)), nil
	case *array.Int64:
		return x.Value(i), nil
	case *array.Uint8:
		return int64(x.Value(i)), nil
	case *array.Uint16:
		return int64(x.Value(i)), nil
	case *array.Uint32:
		return int64(x.Value(i)), nil
	case *array.Float32:
		return float64(x.Value(i)), nil
	case *array.Float64:
		return x.Value(i), nil
	case *array.String:
		return x.Value(i), nil
	case *array.LargeString:
		return x.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), x.Value(i)...), nil
	case *array.List:
		lo, hi := x.ValueOffsets(i)
		return listValue(x.ListValues(), int(lo), int(hi))
	case *array.LargeList:
		lo, hi := x.ValueOffsets(i)
		return listValue(x.ListValues(), int(lo), int(hi))
	case *array.Struct: // an element of an Array of Structs
		st := x.DataType().(*arrow.StructType)
		m := make(map[string]any, x.NumField())
		for k := 0; k < x.NumField(); k++ {
			v, err := arrowValue(x.Field(k), i)
			if err != nil {
				return nil, err
			}
			m[st.Field(k).Name] = v
		}
		return m, nil
	case *array.FixedSizeList:
		n := x.DataType().(*arrow.FixedSizeListType).Len()
		off := x.Offset() + i
		return listValue(x.ListValues(), off*int(n), (off+1)*int(n))
	}
	return nil, fmt.Errorf("Parquet values of type %s are not supported", a.DataType())
}

// listValue returns elements [lo, hi) of a list's values: []float32 for
// float32 lists, raw bytes for 8-bit integer lists (vectors), else a list.
func listValue(vals arrow.Array, lo, hi int) (any, error) {
	switch x := vals.(type) {
	case *array.Float32:
		return append([]float32(nil), x.Float32Values()[lo:hi]...), nil
	case *array.Uint8:
		return append([]byte(nil), x.Uint8Values()[lo:hi]...), nil
	case *array.Int8:
		out := make([]byte, hi-lo)
		for k, v := range x.Int8Values()[lo:hi] {
			out[k] = byte(v)
		}
		return out, nil
	}
	out := make([]any, hi-lo)
	for k := lo; k < hi; k++ {
		v, err := arrowValue(vals, k)
		if err != nil {
			return nil, err
		}
		out[k-lo] = v
	}
	return out, nil
}
