package proxy

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
)

func TestCheckGeometryIndex(t *testing.T) {
	geo := &schemapb.FieldSchema{Name: "geo", DataType: schemapb.DataType_Geometry}
	num := &schemapb.FieldSchema{Name: "n", DataType: schemapb.DataType_Int64}
	for _, it := range []string{"", "AUTOINDEX", "RTREE"} {
		got, err := checkScalarIndex(geo, it, nil)
		require.NoError(t, err, it)
		require.Equal(t, "RTREE", got)
	}
	for _, it := range []string{"INVERTED", "STL_SORT", "BITMAP", "Trie"} {
		_, err := checkScalarIndex(geo, it, nil)
		require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
		require.ErrorContains(t, err, it+" are not supported on Geometry field")
	}
	_, err := checkScalarIndex(num, "RTREE", nil)
	require.ErrorContains(t, err, "RTREE index can only be built on geometry field")
	got, err := checkScalarIndex(num, "", nil)
	require.NoError(t, err)
	require.Equal(t, "INVERTED", got, "other fields keep their rules")
}
