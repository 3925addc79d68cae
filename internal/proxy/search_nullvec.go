package proxy

import "github.com/strata-db/strata/internal/column"

// nullQueries marks, for a search by primary key, the keys whose stored
// vector is null (a nullable vector field); nil when none is. Milvus 2.6
// answers such a query with no hits rather than an error.
func nullQueries(stored column.Column, rows []int) []bool {
	if stored == nil || stored.Validity() == nil {
		return nil
	}
	var out []bool
	for j, i := range rows {
		if stored.IsNull(i) {
			if out == nil {
				out = make([]bool, len(rows))
			}
			out[j] = true
		}
	}
	return out
}
