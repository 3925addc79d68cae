package distance

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// guardedFloats returns a slice of n float32 that ends exactly at an
// inaccessible page, so a kernel that reads past the end faults.
func guardedFloats(t *testing.T, n int) []float32 {
	t.Helper()
	page := unix.Getpagesize()
	size := (n*4+page-1)/page*page + page
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, unix.Munmap(mem)) })
	require.NoError(t, unix.Mprotect(mem[size-page:], unix.PROT_NONE))
	end := size - page
	if n == 0 {
		return []float32{}
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[end-n*4])), n)
}

// guardedBytes returns a slice of n bytes that ends exactly at an
// inaccessible page.
func guardedBytes(t *testing.T, n int) []byte {
	t.Helper()
	f := guardedFloats(t, (n+3)/4)
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), len(f)*4)
	return all[len(all)-n:]
}

// TestKernelsStayInBounds runs every kernel on operands that end at a guard
// page, which catches tail handling that touches memory past the slice.
func TestKernelsStayInBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for n := 0; n <= 200; n++ {
		x, y := guardedBytes(t, n), guardedBytes(t, n)
		for i := range x {
			x[i], y[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		xor, and, or := naiveBits(x, y)
		for _, k := range binaryKernels() {
			require.Equal(t, xor, k.hamming(x, y), "%s n=%d", k.name, n)
			require.Equal(t, wantJaccard(and, or), k.jaccard(x, y), "%s n=%d", k.name, n)
		}
		if n == 0 {
			continue
		}
		// Batches whose last row ends at the guard page.
		data := guardedBytes(t, 3*n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		out := make([]float32, 3)
		for _, k := range availableKernels() {
			k.hammingBatch(x, data, out)
			for i := range out {
				require.Equal(t, float32(HammingGeneric(x, data[i*n:(i+1)*n])), out[i], "%s batch n=%d row %d", k.name, n, i)
			}
		}
	}
	for n := 0; n <= 70; n++ {
		a, b := guardedFloats(t, n), guardedFloats(t, n)
		for i := range a {
			a[i], b[i] = r.Float32(), r.Float32()
		}
		for _, k := range pairKernels() {
			want := k.ref(a, b)
			requireClose(t, want, k.fn(a, b), want, "%s n=%d", k.name, n)
		}
		if n == 0 {
			continue
		}
		for rows := 1; rows <= 5; rows++ {
			data := guardedFloats(t, n*rows)
			for i := range data {
				data[i] = r.Float32()
			}
			out := make([]float32, rows)
			for _, k := range batchKernels() {
				k.fn(a, data, out)
				for i := range out {
					want := k.ref(a, data[i*n:(i+1)*n])
					requireClose(t, want, out[i], want, "%s dim=%d rows=%d", k.name, n, rows)
				}
			}
		}
	}
}
