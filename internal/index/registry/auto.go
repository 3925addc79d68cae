package registry

import (
	"slices"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// autoType is the AUTOINDEX entry: it accepts every field any other type
// accepts and builds nothing itself; Resolve and Auto say what it builds.
func autoType() *Type {
	var fields []schemapb.DataType
	for _, t := range slices.Concat(denseTypes(), binaryTypes(), sparseTypes(), scalarTypes()) {
		for _, dt := range t.Fields {
			if !slices.Contains(fields, dt) {
				fields = append(fields, dt)
			}
		}
	}
	return &Type{Name: AutoIndex, Family: Any, Fields: fields}
}

// BuildsOn reports whether an index of type t on a field of data type dt
// writes an index file. Types without Build are served by exact search;
// embedding lists (ArrayOfVector) are searched by exact MAX_SIM scans and
// filters on JSON fields scan, whatever the type, so nothing is built on
// them either.
func (t *Type) BuildsOn(dt schemapb.DataType) bool {
	return t.Build != nil && dt != schemapb.DataType_ArrayOfVector && dt != schemapb.DataType_JSON
}
