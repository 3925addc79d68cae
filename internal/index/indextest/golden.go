package indextest

import (
	"flag"
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
