package rootcoord

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// checkVectorDefault refuses a default value on a vector field. As in
// Milvus 2.6, vector fields may be nullable (a row may hold no vector), but a
// missing vector is always null, never filled in from a default.
func checkVectorDefault(f *schemapb.FieldSchema) error {
	if f.GetDefaultValue() != nil {
		return errcode.Invalid("type not support default_value, type:%s, name:%s", f.GetDataType(), f.GetName())
	}
	return nil
}
