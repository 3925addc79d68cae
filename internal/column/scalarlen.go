package column

import "github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

// ScalarLen is the number of values a scalar list holds, whatever its type:
// the elements of one Array row, or the rows of a wire column (0 for an
// empty or unknown list).
func ScalarLen(s *schemapb.ScalarField) int {
	switch d := s.GetData().(type) {
	case *schemapb.ScalarField_BoolData:
		return len(d.BoolData.GetData())
	case *schemapb.ScalarField_IntData:
		return len(d.IntData.GetData())
	case *schemapb.ScalarField_LongData:
		return len(d.LongData.GetData())
	case *schemapb.ScalarField_FloatData:
		return len(d.FloatData.GetData())
	case *schemapb.ScalarField_DoubleData:
		return len(d.DoubleData.GetData())
	case *schemapb.ScalarField_StringData:
		return len(d.StringData.GetData())
	case *schemapb.ScalarField_JsonData:
		return len(d.JsonData.GetData())
	case *schemapb.ScalarField_GeometryWktData:
		return len(d.GeometryWktData.GetData())
	case *schemapb.ScalarField_ArrayData:
		return len(d.ArrayData.GetData())
	}
	return 0
}
