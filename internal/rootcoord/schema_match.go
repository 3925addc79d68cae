package rootcoord

import (
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// checkMatchField validates enable_match (text_match / phrase_match on the
// field): as in Milvus it needs enable_analyzer on the same field, and only
// a VarChar field can be analyzed.
func checkMatchField(f *schemapb.FieldSchema) error {
	if !boolTypeParam(f, "enable_match") {
		return nil
	}
	if f.GetDataType() != schemapb.DataType_VarChar {
		return errcode.Invalid("field %s: enable_match is only supported on VarChar fields, got %s", f.GetName(), f.GetDataType())
	}
	if !boolTypeParam(f, "enable_analyzer") {
		return errcode.Invalid("field %s is set to enable match or bm25 function but not enable analyzer", f.GetName())
	}
	return nil
}

// boolTypeParam reports whether type param key is set to true (any case,
// as pymilvus sends "True").
func boolTypeParam(f *schemapb.FieldSchema, key string) bool {
	v, ok := typeParam(f, key)
	return ok && strings.EqualFold(strings.TrimSpace(v), "true")
}
