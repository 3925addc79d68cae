package segment

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRowIndexKeepsEveryRowInOrder(t *testing.T) {
	var x rowIndex[string]
	_, _, ok := x.rows("a")
	require.False(t, ok, "an empty index holds nothing")
	for r, k := range []string{"a", "b", "a", "c", "a", "b"} {
		x.add(k, int32(r))
	}
	all := func(k string) []int32 {
		first, more, ok := x.rows(k)
		if !ok {
			return nil
		}
		return append([]int32{first}, more...)
	}
	require.Equal(t, []int32{0, 2, 4}, all("a"))
	require.Equal(t, []int32{1, 5}, all("b"))
	require.Equal(t, []int32{3}, all("c"))
	require.Nil(t, all("d"))
	require.Len(t, x.more, 2, "only keys appended again have a list")
}
