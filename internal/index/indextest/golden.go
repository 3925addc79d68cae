package indextest

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update-golden", false, "rewrite the golden files under testdata from the current code")

// Golden compares got with the file testdata/name of the calling package's
// directory. Run the test with -update-golden to write the file from got
// instead; the committed file then pins the bytes the code produces.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run the test with -update-golden")
	require.Equal(t, want, got, "bytes differ from the golden file %s", path)
}

// Marshaler is an index that writes itself as a file.
type Marshaler interface {
	Marshal(w io.Writer) error
}

// Bytes returns the file x marshals to.
func Bytes(t testing.TB, x Marshaler) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, x.Marshal(&buf))
	return buf.Bytes()
}

// FromReader adapts an Unmarshal that reads a stream to one that takes the
// whole file, as MarshalGolden and RequireRejects want.
func FromReader[T any](unmarshal func(io.Reader) (T, error)) func([]byte) (T, error) {
	return func(b []byte) (T, error) { return unmarshal(bytes.NewReader(b)) }
}

// MarshalGolden pins a file format: x must marshal to the bytes of the
// golden file testdata/name (see Golden), load must accept that file, and
// the loaded index must marshal to the same bytes again. It returns the
// loaded index.
func MarshalGolden[T Marshaler](t testing.TB, name string, x T, load func([]byte) (T, error)) T {
	t.Helper()
	data := Bytes(t, x)
	Golden(t, name, data)
	back, err := load(data)
	require.NoError(t, err)
	require.Equal(t, data, Bytes(t, back), "a loaded index marshals to the same bytes")
	return back
}

// BenchmarkMarshal times x.Marshal into a reused buffer, reporting the
// file size as bytes per operation.
func BenchmarkMarshal(b *testing.B, x Marshaler) {
	var buf bytes.Buffer
	require.NoError(b, x.Marshal(&buf))
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	for b.Loop() {
		buf.Reset()
		require.NoError(b, x.Marshal(&buf))
	}
}

// BenchmarkUnmarshal times load of the file x marshals to, reporting the
// file size as bytes per operation.
func BenchmarkUnmarshal[T any](b *testing.B, x Marshaler, load func([]byte) (T, error)) {
	data := Bytes(b, x)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		_, err := load(data)
		require.NoError(b, err)
	}
}
