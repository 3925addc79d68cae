package rootcoord

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// checkSparseField validates a SparseFloatVector field: it has no dimension
// (each row has its own), and like every vector it is neither the primary
// key nor given a default value (it may be nullable).
func checkSparseField(f *schemapb.FieldSchema) error {
	name := f.GetName()
	if f.GetIsPrimaryKey() {
		return errcode.Invalid("field %q: the data type of the primary key should be Int64 or VarChar", name)
	}
	if err := checkVectorDefault(f); err != nil {
		return err
	}
	if _, ok := typeParam(f, "dim"); ok {
		return errcode.Invalid("field %q: dim should not be specified for a sparse vector field", name)
	}
	return nil
}
