package registry

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/index/sparse"
)

func TestEmptyNullRowsBuildsASparseIndex(t *testing.T) {
	row := []byte{1, 0, 0, 0, 0, 0, 0x80, 0x3f} // index 1, value 1.0
	c := &column.SparseVectors{Nulls: column.Nulls{Valid: []bool{true, false, true}}, Dim: 2, Data: [][]byte{row, nil, row}}
	rows := emptyNullRows(c)
	require.Equal(t, [][]byte{row, {}, row}, rows)
	p, err := sparse.ParseBuildParams("SPARSE_INVERTED_INDEX", map[string]string{"metric_type": "IP"})
	require.NoError(t, err)
	x, err := sparse.Build(t.Context(), rows, p)
	require.NoError(t, err, "a null row must not fail the build")
	require.Equal(t, 3, x.Len(), "the index stays row-aligned with the segment")

	// Without nulls the rows are used as they are.
	plain := &column.SparseVectors{Dim: 2, Data: [][]byte{row}}
	require.Equal(t, plain.Data, emptyNullRows(plain))
}
