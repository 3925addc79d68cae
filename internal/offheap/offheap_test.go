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
