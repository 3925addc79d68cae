package proxy

import (
	"strconv"

	"github.com/strata-db/strata/internal/catalog"
)

// AllowInsertAutoIDKey is the collection property that lets inserts into an
// auto-ID collection supply their own primary keys (Milvus 2.6
// allow_insert_auto_id); rows without keys still get generated ones.
const AllowInsertAutoIDKey = "allow_insert_auto_id"

// allowInsertAutoID reports whether col has allow_insert_auto_id set to a
// true value ("true", "True", "1").
func allowInsertAutoID(col *catalog.Collection) bool {
	v, err := strconv.ParseBool(col.Properties[AllowInsertAutoIDKey])
	return err == nil && v
}
