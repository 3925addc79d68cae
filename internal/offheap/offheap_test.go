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

// TestDiscard: a discarded region reads as zeros and stays mapped; Holds
// tells slices into it from others.
func TestDiscard(t *testing.T) {
	r, err := Reserve(1 << 16)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	s, err := Slice[int64](r)
	require.NoError(t, err)
	for i := range 100 {
		s = append(s, int64(i+1))
	}
	require.True(t, Holds(r, s))
	require.True(t, Holds(r, s[50:]))
	require.False(t, Holds(r, make([]int64, 3)))
	require.False(t, Holds(r, []int64(nil)))
	require.NoError(t, r.Discard())
	for _, v := range s {
		require.Zero(t, v)
	}
	s = append(s, 7)
	require.Equal(t, int64(7), s[100])
	require.NoError(t, r.Close())
	require.NoError(t, r.Discard())
	require.False(t, Holds(r, s))
}
