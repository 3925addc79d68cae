package rest

import (
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// geometryScalars builds a Geometry column from REST row values: each a
// WKT string (null rows, already marked invalid, stay empty). The proxy
// parses and checks the WKT as for gRPC inserts.
func geometryScalars(values []any, wrap func(int, error) error) (*schemapb.ScalarField, error) {
	d := make([]string, len(values))
	for i, v := range values {
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, wrap(i, fmt.Errorf("%v is not a WKT string", v))
		}
		d[i] = s
	}
	return &schemapb.ScalarField{Data: &schemapb.ScalarField_GeometryWktData{GeometryWktData: &schemapb.GeometryWktArray{Data: d}}}, nil
}
