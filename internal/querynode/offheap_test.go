package querynode

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// TestReadInto: binlog parts are copied into a region of exactly the
// segment's rows; parts with nulls, another shape, or too many or too few
// rows leave the field to the heap path (ok false), and a read error is
// returned.
func TestReadInto(t *testing.T) {
	vecs := func(dim int, rows ...int) func(func(column.Column) error) error {
		return func(fn func(column.Column) error) error {
			next := 0
			for _, n := range rows {
				p := &column.FloatVectors{Dim: dim}
				for range n * dim {
					p.Data = append(p.Data, float32(next))
					next++
				}
				if err := fn(p); err != nil {
					return err
				}
			}
			return nil
		}
	}
	data := func(p column.Column) ([]float32, bool) {
		q, is := p.(*column.FloatVectors)
		return dataOf(q, is && q.Dim == 4, func() []float32 { return q.Data })
	}

	got, r, ok, err := readInto(vecs(4, 1000, 1, 999), 2000, 4, data)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, got, 8000)
	for i, v := range got {
		require.Equal(t, float32(i), v)
	}
	require.NoError(t, r.Close())

	for name, parts := range map[string]func(func(column.Column) error) error{
		"too many rows": vecs(4, 1000, 1001),
		"too few rows":  vecs(4, 1000, 999),
		"another dim":   vecs(8, 1000),
		"nulls": func(fn func(column.Column) error) error {
			return fn(&column.FloatVectors{Nulls: column.Nulls{Valid: make([]bool, 2000)}, Dim: 4, Data: make([]float32, 8000)})
		},
	} {
		got, r, ok, err := readInto(parts, 2000, 4, data)
		require.NoError(t, err, name)
		require.False(t, ok, name)
		require.Nil(t, got, name)
		require.Nil(t, r, name)
	}

	boom := errors.New("read failed")
	_, _, ok, err = readInto(func(func(column.Column) error) error { return boom }, 10, 4, data)
	require.ErrorIs(t, err, boom)
	require.False(t, ok)
}
