package querynode

import "github.com/strata-db/strata/internal/column"

// maskNullVectors clears mask for the rows whose vector is null. A null
// vector (a nullable vector field, Milvus 2.6) is never a search hit: not in
// a plain or range search, a group-by, an iterator page or a hybrid
// sub-search. The rows stay in the segment and in its index (their slots are
// zero-filled), so row numbers stay aligned; only the mask skips them.
func maskNullVectors(mask []bool, c column.Column) {
	if c == nil {
		return
	}
	valid := c.Validity()
	if valid == nil {
		return
	}
	for i := range mask {
		if i < len(valid) && !valid[i] {
			mask[i] = false
		}
	}
}
