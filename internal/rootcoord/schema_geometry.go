package rootcoord

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// checkGeometryField validates a Geometry field: it cannot be the primary
// key, and a default value must be a WKT string that parses (Milvus keeps
// it as WKT in the schema and converts it when it fills rows).
func checkGeometryField(f *schemapb.FieldSchema) error {
	if f.GetIsPrimaryKey() {
		return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", f.GetName())
	}
	dv := f.GetDefaultValue()
	if dv == nil {
		return nil
	}
	if _, ok := dv.GetData().(*schemapb.ValueField_StringData); !ok {
		return errcode.Invalid("invalid default value for geometry field")
	}
	if _, err := column.ParseWKT(dv.GetStringData()); err != nil {
		return errcode.Invalid("invalid default value for geometry field")
	}
	return nil
}
