package querynode

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func TestMaskNullVectors(t *testing.T) {
	vecs := &column.FloatVectors{Nulls: column.Nulls{Valid: []bool{true, false, true, false}}, Dim: 1, Data: []float32{1, 0, 3, 0}}
	mask := []bool{true, true, false, true}
	maskNullVectors(mask, vecs)
	require.Equal(t, []bool{true, false, false, false}, mask)

	// A column without nulls, or no column, leaves the mask alone.
	mask = []bool{true, false, true}
	maskNullVectors(mask, &column.FloatVectors{Dim: 1, Data: []float32{1, 2, 3}})
	maskNullVectors(mask, nil)
	require.Equal(t, []bool{true, false, true}, mask)
}
