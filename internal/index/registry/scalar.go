package registry

import (
	"context"
	"fmt"
	"io"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/scalar"
)

// Data types of the scalar index types, as scalar.Check admits them.
var (
	intFields = []schemapb.DataType{
		schemapb.DataType_Int8, schemapb.DataType_Int16, schemapb.DataType_Int32,
		schemapb.DataType_Int64, schemapb.DataType_Timestamptz,
	}
	stringFields = []schemapb.DataType{schemapb.DataType_VarChar, schemapb.DataType_String}
	floatFields  = []schemapb.DataType{schemapb.DataType_Float, schemapb.DataType_Double}
	boolField    = []schemapb.DataType{schemapb.DataType_Bool}
	arrayField   = []schemapb.DataType{schemapb.DataType_Array}
	jsonField    = []schemapb.DataType{schemapb.DataType_JSON}
)

// scalarTypes are the filter index types: INVERTED, STL_SORT, BITMAP and
// Trie (scalar.Check says which field, element and JSON cast types each
// takes), and RTREE on geometries. An index on a JSON field is recorded
// but not built (see BuildsOn).
func scalarTypes() []*Type {
	kindType := func(k scalar.Kind, fields []schemapb.DataType, aliases ...string) *Type {
		return &Type{
			Name: k.String(), Family: Scalar, Aliases: aliases, Fields: fields,
			ParseParams: func(f *schemapb.FieldSchema, params map[string]string) error {
				return scalar.Check(k, f, params)
			},
			Build: func(ctx context.Context, c column.Column, _ map[string]string) (Built, error) {
				return scalar.Build(ctx, k, c)
			},
			FileKey: k.String(),
			Load:    readAll(scalar.Unmarshal),
		}
	}
	return []*Type{
		kindType(scalar.Inverted, concat(boolField, intFields, floatFields, stringFields, arrayField, jsonField)),
		kindType(scalar.Sort, concat(intFields, floatFields, stringFields)),
		kindType(scalar.Bitmap, concat(boolField, intFields, stringFields, arrayField)),
		kindType(scalar.Trie, stringFields, "TRIE"),
		{
			Name: scalar.RTreeFileKey, Family: Geometry, Fields: []schemapb.DataType{schemapb.DataType_Geometry},
			Build: func(_ context.Context, c column.Column, _ map[string]string) (Built, error) {
				g, ok := c.(*column.Geometries)
				if !ok {
					return nil, fmt.Errorf("RTREE index: column is %T, not Geometry", c)
				}
				return scalar.BuildRTree(g), nil
			},
			FileKey: scalar.RTreeFileKey,
			Load:    readAll(scalar.UnmarshalRTree),
		},
	}
}

// concat joins data type lists.
func concat(lists ...[]schemapb.DataType) []schemapb.DataType {
	var out []schemapb.DataType
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// unwrap returns a decoded index as a Built, and nil on error (never a
// typed nil).
// readAll adapts a decoder of a whole file held in memory (the filter
// indexes', which are small next to vector indexes) to Type.Load.
func readAll[T Built](decode func([]byte) (T, error)) func(io.Reader) (Built, error) {
	return func(r io.Reader) (Built, error) {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return unwrap(decode(data))
	}
}

func unwrap[T Built](x T, err error) (Built, error) {
	if err != nil {
		return nil, err
	}
	return x, nil
}
