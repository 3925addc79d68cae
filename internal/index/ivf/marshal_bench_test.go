package ivf

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index"
)

// BenchmarkMarshal writes the fixture's IVF_FLAT index (20000 x 64).
func BenchmarkMarshal(b *testing.B) {
	x := fix().index(b, Flat, index.L2)
	var buf bytes.Buffer
	require.NoError(b, x.Marshal(&buf))
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		require.NoError(b, x.Marshal(&buf))
	}
}

// BenchmarkUnmarshal reads the file BenchmarkMarshal writes.
func BenchmarkUnmarshal(b *testing.B) {
	var buf bytes.Buffer
	require.NoError(b, fix().index(b, Flat, index.L2).Marshal(&buf))
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for b.Loop() {
		_, err := Unmarshal(bytes.NewReader(buf.Bytes()))
		require.NoError(b, err)
	}
}
