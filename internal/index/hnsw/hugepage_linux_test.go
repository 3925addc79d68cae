package hnsw

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHugeSpan(t *testing.T) {
	const h = hugePage
	for _, c := range []struct {
		addr, size, skip, n uintptr
	}{
		{0, 2 * h, 0, 2 * h},
		{0, 2*h - 1, 0, 0},
		{h, 3*h + 5, 0, 3 * h},
		{h + 4096, 3 * h, h - 4096, 2 * h},
		{h + 4096, 2 * h, h - 4096, h},
		{7, 10 * h, h - 7, 9 * h},
	} {
		skip, n := hugeSpan(c.addr, c.size)
		require.Equal(t, c.skip, skip, "%+v", c)
		require.Equal(t, c.n, n, "%+v", c)
		if n > 0 {
			require.Zero(t, (c.addr+skip)%h)
			require.LessOrEqual(t, skip+n, c.size)
		}
	}
}

// TestAdviseHugeKeepsData checks that advising the pages
// under an array in use leaves its contents as they were.
func TestAdviseHugeKeepsData(t *testing.T) {
	s := make([]float32, 3*hugePage/4+123)
	for i := range s {
		s[i] = float32(i)
	}
	adviseHuge(s)
	for i := range s {
		if s[i] != float32(i) {
			require.Equal(t, float32(i), s[i], "row %d", i)
		}
	}
}
