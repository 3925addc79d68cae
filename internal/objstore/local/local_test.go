package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/objstore/objtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t *testing.T) *local.Store {
	t.Helper()
	s, err := local.Open(filepath.Join(t.TempDir(), "objects"))
	require.NoError(t, err)
	return s
}

func TestConformance(t *testing.T) {
	objtest.RunConformance(t, func(t *testing.T) objstore.Store { return open(t) })
}

func TestLayout(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Put(ctx, "files/insert_log/1/2/3/100/7", []byte("data")))
	got, err := os.ReadFile(filepath.Join(s.Root(), "files", "insert_log", "1", "2", "3", "100", "7"))
	require.NoError(t, err)
	require.Equal(t, "data", string(got))
}

func TestListSkipsTempFiles(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Put(ctx, "a/b", []byte("x")))
	// Leftovers of a crash mid-Put.
	require.NoError(t, os.WriteFile(filepath.Join(s.Root(), "a", ".tmp-b-123"), []byte("partial"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(s.Root(), "a", ".tmp-dir"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(s.Root(), "a", ".tmp-dir", "f"), []byte("partial"), 0o600))

	infos, err := s.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, "a/b", infos[0].Key)
}

func TestRemoveStaleTemp(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Put(ctx, "files/insert_log/1/2/3/100/7", []byte("data")))
	old := time.Now().Add(-time.Hour)
	leftover := func(rel string, mtime time.Time) string {
		p := filepath.Join(s.Root(), filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o600))
		require.NoError(t, os.Chtimes(p, mtime, mtime))
		return p
	}
	stale := leftover("files/insert_log/1/2/3/100/.tmp-8-111", old)
	staleAlone := leftover("files/insert_log/1/2/9/101/.tmp-5-222", old) // its directories hold nothing else
	young := leftover("files/insert_log/1/2/3/100/.tmp-9-333", time.Now())
	otherKind := leftover("files/delta_log/1/2/3/.tmp-4-444", old)

	removed, err := s.RemoveStaleTemp(ctx, "files/insert_log/", time.Now().Add(-time.Minute))
	require.NoError(t, err)
	var keys []string
	for _, o := range removed {
		keys = append(keys, o.Key)
		require.EqualValues(t, len("partial"), o.Size)
	}
	require.ElementsMatch(t, []string{"files/insert_log/1/2/3/100/.tmp-8-111", "files/insert_log/1/2/9/101/.tmp-5-222"}, keys)
	require.NoFileExists(t, stale)
	require.NoFileExists(t, staleAlone)
	require.NoDirExists(t, filepath.Join(s.Root(), "files", "insert_log", "1", "2", "9"), "emptied directories are pruned")
	require.FileExists(t, young, "a Put may still be writing a young temporary file")
	require.FileExists(t, otherKind, "outside the prefix")
	got, err := s.Get(ctx, "files/insert_log/1/2/3/100/7")
	require.NoError(t, err)
	require.Equal(t, "data", string(got))

	// Nothing left to do; an absent prefix is not an error.
	removed, err = s.RemoveStaleTemp(ctx, "files/insert_log/", time.Now().Add(-time.Minute))
	require.NoError(t, err)
	require.Empty(t, removed)
	removed, err = s.RemoveStaleTemp(ctx, "files/stats_log/", time.Now())
	require.NoError(t, err)
	require.Empty(t, removed)
}

func TestReservedKeys(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for _, key := range []string{".tmp-x", "a/.tmp-b", "a/.tmp-/c"} {
		t.Run(key, func(t *testing.T) {
			require.ErrorIs(t, s.Put(ctx, key, nil), objstore.ErrInvalidKey)
		})
	}
}

func TestDeletePrunesEmptyDirectories(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Put(ctx, "x/y/z/1", []byte("1")))
	require.NoError(t, s.Put(ctx, "x/other", []byte("2")))

	require.NoError(t, s.Delete(ctx, "x/y/z/1"))
	_, err := os.Stat(filepath.Join(s.Root(), "x", "y"))
	require.ErrorIs(t, err, os.ErrNotExist, "empty x/y/z and x/y are removed")
	_, err = os.Stat(filepath.Join(s.Root(), "x"))
	require.NoError(t, err, "x still holds x/other")

	require.NoError(t, s.Delete(ctx, "x/other"))
	entries, err := os.ReadDir(s.Root())
	require.NoError(t, err, "the root itself is kept")
	require.Empty(t, entries)
}

func TestKeyDirectoryConflict(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	require.NoError(t, s.Put(ctx, "k/file", []byte("1")))
	require.Error(t, s.Put(ctx, "k/file/below", []byte("2")), "a file cannot become a directory")
	require.Error(t, s.Put(ctx, "k", []byte("3")), "a directory cannot become a file")
	got, err := s.Get(ctx, "k/file")
	require.NoError(t, err)
	require.Equal(t, "1", string(got))
}

func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := local.Open(dir)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, "p/q", []byte("persisted")))

	s2, err := local.Open(dir)
	require.NoError(t, err)
	got, err := s2.Get(ctx, "p/q")
	require.NoError(t, err)
	require.Equal(t, "persisted", string(got))
}
