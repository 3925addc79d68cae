package offheap

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReserve: a region is whole pages, zeroed, and a slice over it
// appends in place up to its capacity, then moves to the Go heap by
// append's usual copy, leaving the region as it was.
func TestReserve(t *testing.T) {
	r, err := Reserve(5000)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	require.Zero(t, r.Size()%4096)
	require.GreaterOrEqual(t, r.Size(), 5000)

	s, err := Slice[float32](r)
	require.NoError(t, err)
	require.Empty(t, s)
	require.Equal(t, r.Size()/4, cap(s))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	for i := range cap(s) {
		s = append(s, float32(i))
	}
	require.Equal(t, base, uintptr(unsafe.Pointer(unsafe.SliceData(s))), "appends within the capacity stay in the region")
	require.Equal(t, float32(7), s[7])

	full := s
	s = append(s, -1)
	require.NotEqual(t, base, uintptr(unsafe.Pointer(unsafe.SliceData(s))), "an append past the capacity copies")
	require.Equal(t, full, s[:len(full)])
	require.Equal(t, float32(-1), s[len(full)])

	u, err := Slice[uint64](r)
	require.NoError(t, err)
	require.Equal(t, r.Size()/8, cap(u))
}

// TestZeroed: fresh pages read as zero, so a slice over a region can be
// extended without writing.
func TestZeroed(t *testing.T) {
	r, err := Reserve(1 << 20)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	u, err := Slice[uint64](r)
	require.NoError(t, err)
	u = u[:cap(u)]
	for _, v := range u {
		require.Zero(t, v)
	}
}

// TestClose: Close is idempotent, and a closed region gives no slice.
func TestClose(t *testing.T) {
	r, err := Reserve(4096)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err = Slice[byte](r)
	require.ErrorIs(t, err, ErrClosed)
}

// TestReserveBadSize: a size that is not positive is an error.
func TestReserveBadSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		_, err := Reserve(n)
		require.Error(t, err)
	}
}

// TestDiscard: slices carved from one region grow in place side by side;
// discarding one gives its pages back (it reads as zeros) and leaves its
// neighbours alone; Holds tells slices in the region from others.
func TestDiscard(t *testing.T) {
	page := PageSize()
	r, err := Reserve(4 * page)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	a, err := SliceAt[int64](r, 0, 2*page)
	require.NoError(t, err)
	b, err := SliceAt[int64](r, 2*page, 2*page)
	require.NoError(t, err)
	require.Equal(t, 2*page/8, cap(a))
	for i := range cap(a) {
		a, b = append(a, int64(i+1)), append(b, int64(-i-1))
	}
	require.True(t, Holds(r, a))
	require.True(t, Holds(r, b[50:]))
	require.False(t, Holds(r, make([]int64, 3)))
	require.False(t, Holds(r, []int64(nil)))

	require.NoError(t, Discard(r, b))
	for i, v := range a {
		require.Equal(t, int64(i+1), v, "the neighbour keeps its pages")
	}
	for _, v := range b {
		require.Zero(t, v)
	}
	require.NoError(t, Discard(r, make([]int64, 10)), "not in the region: nothing")

	for _, c := range [][2]int{{1, page}, {0, page + 1}, {0, 0}, {3 * page, 2 * page}, {-page, page}} {
		_, err := SliceAt[byte](r, c[0], c[1])
		require.Error(t, err, "%v", c)
	}
	require.NoError(t, r.Close())
	require.NoError(t, Discard(r, a))
	require.False(t, Holds(r, a))
	_, err = SliceAt[byte](r, 0, page)
	require.ErrorIs(t, err, ErrClosed)
}
