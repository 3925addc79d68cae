package scalar

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

func geoCol(t *testing.T, wkts ...string) *column.Geometries {
	t.Helper()
	c := &column.Geometries{Nulls: column.Nulls{Valid: make([]bool, len(wkts))}, Data: make([][]byte, len(wkts))}
	for i, w := range wkts {
		if w == "" {
			continue
		}
		b, err := column.ParseWKT(w)
		require.NoError(t, err)
		c.Data[i], c.Valid[i] = b, true
	}
	return c
}

func TestRTreeMarkBoxAndFile(t *testing.T) {
	c := geoCol(t, "POINT (1 1)", "", "POLYGON ((10 10, 20 10, 20 20, 10 20, 10 10))", "POINT EMPTY",
		"LINESTRING (-5 -5, 0 0)")
	x := BuildRTree(c)
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	y, err := UnmarshalRTree(buf.Bytes())
	require.NoError(t, err)
	for _, idx := range []*RTree{x, y} {
		require.Equal(t, 5, idx.Len())
		out := make([]bool, 5)
		n, ok := idx.MarkBox(0, 0, 15, 15, out)
		require.True(t, ok)
		require.Equal(t, 3, n)
		require.Equal(t, []bool{true, false, true, false, true}, out)
		out = make([]bool, 5)
		n, ok = idx.MarkBox(100, 100, 200, 200, out)
		require.True(t, ok)
		require.Zero(t, n)
		_, ok = idx.MarkBox(0, 0, 1, 1, make([]bool, 4))
		require.False(t, ok, "wrong output length")
	}
	data := buf.Bytes()
	for _, bad := range [][]byte{nil, data[:10], data[:len(data)-1], append(append([]byte{}, data...), 0)} {
		_, err := UnmarshalRTree(bad)
		require.ErrorIs(t, err, ErrRTreeFormat)
	}
}
