package indexfile

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// mappedFile writes a file of format f holding a byte, words and floats,
// and returns it copied to a 4-aligned buffer at byte offset shift.
func mappedFile(t *testing.T, f Format, shift int) (data []byte, ws []uint32, fs []float32) {
	t.Helper()
	var buf bytes.Buffer
	w := f.NewWriter(&buf)
	_, _ = w.Write([]byte{9})
	ws = []uint32{1, 2, 3, 0xdeadbeef}
	fs = []float32{0.5, -1, 3.25}
	w.Uint32s(ws)
	w.Float32s(fs)
	require.NoError(t, w.Close())
	back := make([]uint32, buf.Len()/4+2) // 4-aligned
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(back))), 4*len(back))
	data = all[shift : shift+buf.Len()]
	copy(data, buf.Bytes())
	return data, ws, fs
}

// TestMapped: a Reader over a Mapped file returns slices of it where the
// words line up in memory, copies them (or fails with the shift that
// would line them up, when Aligned) where they do not, checks the checksum
// the same way, and reports a damaged mapped file as corrupt.
func TestMapped(t *testing.T) {
	f := formats[0] // 12-byte header: the byte ends at 13, words at 13
	for shift := range 4 {
		data, ws, fs := mappedFile(t, f, shift)
		inPlace := (uintptr(unsafe.Pointer(&data[0]))+13)%4 == 0
		for _, aligned := range []bool{false, true} {
			r, err := f.NewReader(&Mapped{Data: data, Aligned: aligned})
			require.NoError(t, err)
			b, err := r.Bytes(1)
			require.NoError(t, err)
			require.Equal(t, []byte{9}, b)
			require.Same(t, &data[12], &b[0], "bytes are a view of the mapping")
			gw, err := r.Words(uint64(len(ws)))
			if aligned && !inPlace {
				var me *MisalignedError
				require.ErrorAs(t, err, &me)
				require.Equal(t, int64(13), me.Offset)
				require.Zero(t, (uintptr(unsafe.Pointer(&data[0]))+13+uintptr(me.Shift))%4, "the shift lines the words up")
				continue
			}
			require.NoError(t, err)
			require.Equal(t, ws, gw)
			require.Equal(t, inPlace, unsafe.Pointer(&gw[0]) == unsafe.Pointer(&data[13]), "words in place iff aligned")
			gf, err := r.Float32s(uint64(len(fs)))
			require.NoError(t, err)
			require.Equal(t, fs, gf)
			require.NoError(t, r.Close())
		}
	}

	data, _, _ := mappedFile(t, f, 0)
	data[14] ^= 1
	r, err := f.NewReader(&Mapped{Data: data})
	require.NoError(t, err)
	_, err = r.Bytes(1)
	require.NoError(t, err)
	_, err = r.Words(4)
	require.NoError(t, err)
	_, err = r.Float32s(3)
	require.NoError(t, err)
	require.ErrorIs(t, r.Close(), errTest, "a damaged mapped file fails its checksum")

	data, _, _ = mappedFile(t, f, 0)
	r, err = f.NewReader(&Mapped{Data: data[:20]})
	require.NoError(t, err)
	_, err = r.Bytes(1)
	require.NoError(t, err)
	_, err = r.Words(4)
	require.ErrorIs(t, err, errTest, "a truncated mapped file is corrupt")
	var me *MisalignedError
	require.NotErrorAs(t, err, &me)
}
