package querynode_test

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/index/diskann"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/stacktest"
)

// openFiles returns the files this process holds open, from /proc/self/fd.
func openFiles(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// A DISKANN index is served from a local copy of its file under the cache
// directory, read by position (open, not mapped), with only its PQ codes
// in memory; it answers as exact search does; a damaged copy is rebuilt
// from object storage and logged; releasing the collection closes the
// file.
func TestDiskANNServedFromLocalFile(t *testing.T) {
	const rows = 3000
	logs := &syncBuffer{}
	s := stacktest.NewWith(t, stacktest.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s.Insert(0, rows)
	s.Flush()
	ctx := context.Background()
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	exactHits, exactOut, _ := readAll(t, s)
	s.QueryNode.Release(s.CollectionID)

	buildIndex(t, s, "DISKANN", "L2")
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	cached := func() []string {
		var files []string
		require.NoError(t, filepath.WalkDir(mmapDir(s), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, "/DISKANN") {
				files = append(files, p)
			}
			return err
		}))
		return files
	}
	files := cached()
	require.NotEmpty(t, files, "the index file has a local copy")
	segs := querynode.SealedSegments(s.QueryNode, s.CollectionID)
	require.NotEmpty(t, segs)
	for _, seg := range segs {
		x, ok := querynode.AttachedIndex(seg, vecField).(*diskann.Index)
		require.True(t, ok, "a DISKANN index is attached")
		require.Less(t, x.MemoryBytes(), x.DiskBytes(), "the records stay in the file")
		addr, _ := querynode.AttachedIndexData(seg, vecField)
		require.Nil(t, addr, "nothing is mapped")
	}
	require.Subset(t, openFiles(t), files, "the local copies are open for reads")
	hits, out, _ := readAll(t, s)
	require.Equal(t, exactHits, hits)
	require.Equal(t, bits(exactOut), bits(out))
	s.QueryNode.Release(s.CollectionID)
	for _, f := range files {
		require.NotContains(t, openFiles(t), f, "releasing closes the file")
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		data[len(data)-100] ^= 0x10 // in the last node record
		require.NoError(t, os.WriteFile(f, data, 0o644))
	}
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 0, nil))
	require.Contains(t, logs.String(), "cache file damaged; rebuilt from object storage")
	hits, _, _ = readAll(t, s)
	require.Equal(t, exactHits, hits)
}
