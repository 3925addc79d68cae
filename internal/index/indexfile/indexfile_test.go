package indexfile

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

var errTest = errors.New("test: corrupt")

var formats = []Format{
	{Magic: "TEST\x00\x00\x00\x00", Version: 3, VersionSize: 4, Corrupt: errTest},
	{Magic: "TST2", Version: 1, VersionSize: 2, Corrupt: errTest},
	{Magic: "TESTFMT7", VersionSize: 0, Corrupt: errTest},
}

func write(t *testing.T, f Format, payload []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := f.NewWriter(&buf)
	_, err := w.Write(payload[:len(payload)/2])
	require.NoError(t, err)
	_, err = w.Write(payload[len(payload)/2:])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestLayout checks the documented bytes: magic, version, payload, CRC-32C.
func TestLayout(t *testing.T) {
	f := Format{Magic: "AB", Version: 0x0102, VersionSize: 2, Corrupt: errTest}
	got := write(t, f, []byte("xyz"))
	// The checksum is compared with a bit-at-a-time CRC-32C, itself checked
	// against the algorithm's standard check value.
	require.Equal(t, []byte("AB\x02\x01xyz"), got[:7])
	require.Len(t, got, 11)
	require.Equal(t, crc32cBitwise(got[:7]), uint32(got[7])|uint32(got[8])<<8|uint32(got[9])<<16|uint32(got[10])<<24)
	require.Equal(t, uint32(0xE3069283), crc32cBitwise([]byte("123456789")), "CRC-32C check value")
}

// crc32cBitwise is a bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78).
func crc32cBitwise(b []byte) uint32 {
	c := ^uint32(0)
	for _, x := range b {
		c ^= uint32(x)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 10000) // larger than the buffers
	for _, f := range formats {
		for _, payload := range [][]byte{{}, []byte("hello"), big} {
			data := write(t, f, payload)
			require.Len(t, data, f.HeaderSize()+len(payload)+4)
			got, err := f.Open(data)
			require.NoError(t, err)
			require.Equal(t, payload, got)

			r, err := f.NewReader(bytes.NewReader(data))
			require.NoError(t, err)
			require.EqualValues(t, f.HeaderSize(), r.Offset())
			back := []byte{}
			for len(back) < len(payload) {
				b, err := r.Next(min(1000, len(payload)-len(back)))
				require.NoError(t, err)
				back = append(back, b...)
			}
			require.Equal(t, payload, back)
			require.NoError(t, r.Close())
		}
	}
}

// TestRejects: every truncation and every flipped byte fails both readers
// with an error wrapping Corrupt.
func TestRejects(t *testing.T) {
	for _, f := range formats {
		payload := []byte("some payload bytes")
		data := write(t, f, payload)
		check := func(b []byte, what string) {
			_, err := f.Open(b)
			require.ErrorIs(t, err, errTest, what)
			r, err := f.NewReader(bytes.NewReader(b))
			if err == nil {
				if _, err = r.Next(len(payload)); err == nil {
					err = r.Close()
				}
			}
			require.ErrorIs(t, err, errTest, what)
		}
		for n := range len(data) {
			check(data[:n], "truncated")
		}
		for i := range data {
			b := bytes.Clone(data)
			b[i] ^= 0x20
			check(b, "flipped")
		}
	}
}

func TestMessages(t *testing.T) {
	f := formats[0]
	data := write(t, f, []byte("p"))
	b := bytes.Clone(data)
	b[0] = 'X'
	_, err := f.Open(b)
	require.ErrorContains(t, err, "test: corrupt: bad magic")
	b = bytes.Clone(data)
	b[8] = 9
	_, err = f.Open(b)
	require.ErrorContains(t, err, "unsupported version 9")
	_, err = f.NewReader(bytes.NewReader(b))
	require.ErrorContains(t, err, "unsupported version 9")
	b = bytes.Clone(data)
	b[12] ^= 1
	_, err = f.Open(b)
	require.ErrorContains(t, err, "checksum")
	_, err = f.Open(data[:5])
	require.ErrorContains(t, err, "5 bytes is too short")
	_, err = f.NewReader(bytes.NewReader(data[:5]))
	require.ErrorContains(t, err, "truncated at offset 0")
}

type failWriter struct{ n int }

var errWrite = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > 100 {
		return 0, errWrite
	}
	w.n += len(p)
	return len(p), nil
}

type failReader struct{}

func (failReader) Read([]byte) (int, error) { return 0, errWrite }

func TestIOErrors(t *testing.T) {
	w := formats[0].NewWriter(&failWriter{})
	_, _ = w.Write(make([]byte, 1<<17))
	require.ErrorIs(t, w.Close(), errWrite)
	w = formats[0].NewWriter(&failWriter{n: 84})
	_, _ = w.Write(make([]byte, 2))
	require.ErrorIs(t, w.Close(), errWrite, "the checksum write fails")
	_, err := formats[0].NewReader(failReader{})
	require.ErrorIs(t, err, errWrite)
	require.NotErrorIs(t, err, errTest)
}

// TestWordsAndBytes round-trips word and byte runs longer than one chunk
// and checks that a run past the end of the file is rejected as corrupt.
func TestWordsAndBytes(t *testing.T) {
	f := formats[0]
	const nw, nb = 3*readChunk/4 + 5, 2*readChunk + 3
	raw := make([]byte, nb)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	var buf bytes.Buffer
	w := f.NewWriter(&buf)
	ws := make([]uint32, nw)
	for i := range ws {
		ws[i] = uint32(i)*2654435761 + 1
	}
	w.Uint32s(ws)
	w.Int32s([]int32{-2, 7})
	w.Float32s([]float32{1.5, -0.25})
	_, _ = w.Write(raw)
	require.NoError(t, w.Close())
	data := buf.Bytes()
	require.Len(t, data, f.HeaderSize()+4*nw+16+nb+4)
	require.Equal(t, []byte{0xb2, 0x79, 0x37, 0x9e}, data[f.HeaderSize()+4:f.HeaderSize()+8], "little-endian word 1")

	r, err := f.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	words, err := r.Words(nw)
	require.NoError(t, err)
	require.Len(t, words, nw)
	require.Equal(t, ws, words)
	tail, err := r.Next(16)
	require.NoError(t, err)
	require.Equal(t, []byte{0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0x80, 0xbe}, tail,
		"int32 -2 and 7, float32 1.5 and -0.25, little-endian")
	b, err := r.Bytes(nb)
	require.NoError(t, err)
	require.Equal(t, raw, b)
	require.NoError(t, r.Close())

	r, err = f.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	_, err = r.Words(1 << 40)
	require.ErrorIs(t, err, errTest, "a huge count fails at the end of the data")
	r, err = f.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	_, err = r.Bytes(1 << 40)
	require.ErrorIs(t, err, errTest)
}

// TestHeader: Header returns the fixed header indexed by file offset, and
// ErrorAt names the offset.
func TestHeader(t *testing.T) {
	f := formats[0]
	data := write(t, f, []byte("abcdefgh"))
	r, err := f.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	h, err := r.Header(f.HeaderSize() + 3)
	require.NoError(t, err)
	require.Equal(t, append(make([]byte, f.HeaderSize()), "abc"...), h)
	require.EqualValues(t, f.HeaderSize()+3, r.Offset())
	_, err = r.Header(f.HeaderSize() + 100)
	require.ErrorIs(t, err, errTest)

	err = f.ErrorAt(12, "dim %d", 0)
	require.ErrorIs(t, err, errTest)
	require.EqualError(t, err, "test: corrupt at offset 12: dim 0")
}

// TestStreamingExact checks that a Reader on a stream of known length
// returns the words bit for bit in slices of exactly their length, that it
// rejects a count the rest of the file cannot hold before allocating it,
// and that an unsized stream reads the same words.
func TestStreamingExact(t *testing.T) {
	f := formats[0]
	var buf bytes.Buffer
	w := f.NewWriter(&buf)
	vals := make([]float32, 70_000) // more than one read chunk
	for i := range vals {
		vals[i] = float32(i) * 0.5
	}
	vals[3] = float32(math.Inf(-1))
	vals[4] = math.Float32frombits(0x7fc00001) // a NaN with a payload
	w.Float32s(vals)
	w.Int32s([]int32{-1, 7})
	require.NoError(t, w.Close())
	file := buf.Bytes()

	for _, tc := range []struct {
		name  string
		r     func() io.Reader
		exact bool
	}{
		{name: "bytes.Reader", r: func() io.Reader { return bytes.NewReader(file) }, exact: true},
		{name: "Sized", r: func() io.Reader { return Sized{Reader: bytes.NewBuffer(file), N: int64(len(file))} }, exact: true},
		{name: "unsized", r: func() io.Reader { return bytes.NewBuffer(file) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := f.NewReader(tc.r())
			require.NoError(t, err)
			got, err := r.Float32s(uint64(len(vals)))
			require.NoError(t, err)
			require.Len(t, got, len(vals))
			if tc.exact {
				require.Equal(t, len(vals), cap(got))
			}
			for i, v := range vals {
				require.Equal(t, math.Float32bits(v), math.Float32bits(got[i]), "word %d", i)
			}
			ints, err := r.Int32s(2)
			require.NoError(t, err)
			require.Equal(t, []int32{-1, 7}, ints)
			require.NoError(t, r.Close())
		})
	}

	r, err := f.NewReader(bytes.NewReader(file))
	require.NoError(t, err)
	_, err = r.Words(1 << 40) // a corrupt count: 4 TiB
	require.ErrorIs(t, err, errTest)
	require.ErrorContains(t, err, "bytes left")
}

// TestWordsLongRuns reads runs of several read chunks straight into the
// returned slice, from sized and unsized streams, bit for bit, and rejects
// a file cut in the middle of a chunk as truncated.
func TestWordsLongRuns(t *testing.T) {
	f := formats[0]
	n := 2*wordChunk/4 + 3
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = math.Float32frombits(uint32(i)*2654435761 + 0x7f800001) // NaN payloads and others
	}
	var buf bytes.Buffer
	w := f.NewWriter(&buf)
	w.Float32s(vals)
	w.Int32s([]int32{-3})
	require.NoError(t, w.Close())
	file := buf.Bytes()
	for name, open := range map[string]func([]byte) io.Reader{
		"sized":   func(b []byte) io.Reader { return bytes.NewReader(b) },
		"unsized": func(b []byte) io.Reader { return bytes.NewBuffer(b) },
	} {
		t.Run(name, func(t *testing.T) {
			r, err := f.NewReader(open(file))
			require.NoError(t, err)
			got, err := r.Float32s(uint64(n))
			require.NoError(t, err)
			require.Len(t, got, n)
			for i := range vals {
				if math.Float32bits(vals[i]) != math.Float32bits(got[i]) {
					t.Fatalf("word %d: %08x, want %08x", i, math.Float32bits(got[i]), math.Float32bits(vals[i]))
				}
			}
			ints, err := r.Int32s(1)
			require.NoError(t, err)
			require.Equal(t, []int32{-3}, ints)
			require.NoError(t, r.Close())

			cut := file[:f.HeaderSize()+wordChunk+wordChunk/2]
			r, err = f.NewReader(open(cut))
			require.NoError(t, err)
			_, err = r.Float32s(uint64(n))
			require.ErrorIs(t, err, errTest)
		})
	}
}
