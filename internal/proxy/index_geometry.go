package proxy

import (
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/errcode"
)

// RTreeIndexType is the Milvus index type for Geometry fields.
const RTreeIndexType = "RTREE"

// checkGeometryIndex applies Milvus's rules for the RTREE index: it is the
// only index a Geometry field takes (an empty type and AUTOINDEX mean
// RTREE), and it can only be built on a Geometry field. handled is false
// when neither the field nor the type is about geometry.
func checkGeometryIndex(f *schemapb.FieldSchema, it string) (string, bool, error) {
	isGeo := f.GetDataType() == schemapb.DataType_Geometry
	switch {
	case it == RTreeIndexType && !isGeo:
		return "", true, errcode.Invalid("RTREE index can only be built on geometry field, got %s field %s", f.GetDataType(), f.GetName())
	case !isGeo:
		return "", false, nil
	case it == "" || it == "AUTOINDEX" || it == RTreeIndexType:
		return RTreeIndexType, true, nil
	}
	return "", true, errcode.Invalid("%s are not supported on Geometry field %s: use RTREE", it, f.GetName())
}
