package segment

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// allRows lists every row the index holds for k, in append order.
func allRows[K comparable, H keyHasher[K]](x *rowIndex[K, H], k K, keys []K) []int32 {
	return x.rows(k, keys, nil)
}

func TestRowIndexKeepsEveryRowInOrder(t *testing.T) {
	var x rowIndex[string, strHasher]
	require.Nil(t, x.rows("a", nil, nil), "an empty index holds nothing")
	keys := []string{"a", "b", "a", "c", "a", "b"}
	for r, k := range keys {
		x.add(k, int32(r), keys)
	}
	require.Equal(t, []int32{0, 2, 4}, allRows(&x, "a", keys))
	require.Equal(t, []int32{1, 5}, allRows(&x, "b", keys))
	require.Equal(t, []int32{3}, allRows(&x, "c", keys))
	require.Nil(t, allRows(&x, "d", keys))
	require.Len(t, x.links, 2*5, "only the rows of keys appended again are linked")
	require.Equal(t, []int32{9, 1, 5}, x.rows("b", keys, []int32{9}), "rows appends to the buffer")
	require.Equal(t, 3, x.used, "one slot a key")
}

// TestRowIndexGrowsKeepingRepeats adds enough keys to double the table
// several times, with repeats added before and after each growth.
func TestRowIndexGrowsKeepingRepeats(t *testing.T) {
	var x rowIndex[int64, intHasher]
	var keys []int64
	add := func(k int64) {
		keys = append(keys, k)
		x.add(k, int32(len(keys)-1), keys)
	}
	const n = 10_000
	for i := range int64(n) {
		add(i<<40 | i) // keys differing in their high bits too
		if i%7 == 3 {
			add((i/2)<<40 | (i / 2))
		}
	}
	require.Greater(t, len(x.slots), 4*rowIndexMinSlots, "the table grew")
	require.LessOrEqual(t, x.used*4, len(x.slots)*3, "at most 3/4 full")
	require.Equal(t, n, x.used)
	want := map[int64][]int32{}
	for r, k := range keys {
		want[k] = append(want[k], int32(r))
	}
	for k, rows := range want {
		require.Equal(t, rows, allRows(&x, k, keys), "key %d", k)
	}
	for i := int64(n); i < n+100; i++ {
		require.Nil(t, allRows(&x, i<<40|i, keys), "absent key %d", i)
	}
}

// TestRowIndexMatchesAMap checks random keys (many repeated) against a Go
// map of every key's rows, looking up after each batch of adds.
func TestRowIndexMatchesAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 7))
	var ix rowIndex[int64, intHasher]
	var sx rowIndex[string, strHasher]
	var ikeys []int64
	var skeys []string
	want := map[int64][]int32{}
	for batch := range 40 {
		for range 1 + rng.IntN(500) {
			k := rng.Int64N(3000) - 1000 // a key space the adds revisit
			if rng.IntN(4) == 0 {
				k = rng.Int64() // mostly unique
			}
			r := int32(len(ikeys))
			ikeys = append(ikeys, k)
			skeys = append(skeys, strconv.FormatInt(k, 36))
			ix.add(k, r, ikeys)
			sx.add(skeys[r], r, skeys)
			want[k] = append(want[k], r)
		}
		for k, rows := range want {
			require.Equal(t, rows, allRows(&ix, k, ikeys), "batch %d key %d", batch, k)
			require.Equal(t, rows, allRows(&sx, strconv.FormatInt(k, 36), skeys), "batch %d key %d", batch, k)
		}
		for range 50 {
			k := rng.Int64()
			if _, ok := want[k]; !ok {
				require.Nil(t, allRows(&ix, k, ikeys))
				require.Nil(t, allRows(&sx, strconv.FormatInt(k, 36), skeys))
			}
		}
	}
	require.Equal(t, len(want), ix.used)
	require.Equal(t, len(want), sx.used)
}
