package fsck_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/fsck"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

// The meta checker reports a flipped bit in a meta-store value as meta
// damage naming the key, and a sound file as clean.
func TestMetaChecker(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, fsck.MetaFile)
	kv, err := embedded.Open(path, nil)
	require.NoError(t, err)
	value := []byte("a value that is easy to find in the file")
	require.NoError(t, kv.Txn(context.Background(), metastore.Put("some/key", value)))
	require.NoError(t, kv.Close())

	check := func() *fsck.Report {
		return fsck.Check(context.Background(), dir, []fsck.Checker{fsck.MetaChecker()})
	}
	require.True(t, check().Clean())

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	at := bytes.Index(raw, value)
	require.Positive(t, at)
	raw[at+3] ^= 0x10
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	r := check()
	require.False(t, r.Clean())
	require.Len(t, r.Damage, 1, "%v", r.Damage)
	d := r.Damage[0]
	require.Equal(t, fsck.KindMeta, d.Kind)
	require.Contains(t, d.Problem, `key "some/key"`)
	require.Contains(t, d.Problem, "checksum")
	require.Contains(t, d.Affects, "refuses to start")
}
