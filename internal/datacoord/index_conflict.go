package datacoord

import (
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// codeCreateIndexFailed is the code Milvus's data coordinator answers an
// index conflict with (a plain error: 65535).
const codeCreateIndexFailed int32 = 65535

// indexConflict decides whether the new index idx may join old, a live
// index of the same collection, with Milvus 2.6's rules: same is true when
// idx repeats old (same name, field and parameters; creating it is a
// no-op); err is set when idx reuses old's name with another definition,
// or is a second index on old's field, unless both are JSON-path indexes
// on different paths.
func indexConflict(old, idx catalog.IndexInfo) (same bool, err error) {
	if old.Name == idx.Name {
		if old.FieldID == idx.FieldID && catalog.JSONIndexParamsEqual(old.Params, idx.Params, true) {
			return true, nil
		}
		return false, errcode.New(codeCreateIndexFailed, "CreateIndex failed: at most one distinct index is allowed per field")
	}
	if old.FieldID != idx.FieldID {
		return false, nil
	}
	op, oldJSON := catalog.JSONIndexTarget(old.Params, true)
	np, newJSON := catalog.JSONIndexTarget(idx.Params, true)
	if oldJSON && newJSON && op != np {
		return false, nil
	}
	return false, errcode.New(codeCreateIndexFailed, "CreateIndex failed: creating multiple indexes on same field is not supported")
}
