package querynode_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/stacktest"
)

// cacheFiles lists the files under the stack's mmap directory, relative
// to it.
func cacheFiles(t *testing.T, s *stacktest.Stack) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(mmapDir(s), func(p string, d fs.DirEntry, err error) error {
		if err != nil && p != mmapDir(s) && errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walked (Collect removing an emptied directory)
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(mmapDir(s), p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return out
}

// plant writes a cache file by hand, as a node that stopped before
// collecting it would have left it.
func plant(t *testing.T, s *stacktest.Stack, key string) {
	t.Helper()
	p := filepath.Join(mmapDir(s), filepath.FromSlash(key))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("stale"), 0o644))
}

// The mmap cache files of what no longer exists are collected: a released
// collection keeps its files for the next load; a dropped index loses its
// index file (a segment that still maps it reads on), a dropped collection
// everything, and files a stopped node left for segments that are gone go
// when the node starts. A file the node did not name is left alone.
func TestMmapCacheCollected(t *testing.T) {
	cfg := querynode.Defaults()
	cfg.Mmap.VectorIndex, cfg.Mmap.VectorField, cfg.Mmap.ScalarField = true, true, true
	cfg.Mmap.CollectInterval = time.Hour // only the start and the drops
	s := stacktest.NewWith(t, stacktest.Options{QueryNode: cfg})
	s.Insert(0, 1000)
	s.Flush()
	buildIndex(t, s, "HNSW", "L2")
	ctx := context.Background()

	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 1, nil))
	wantHits, _, _ := readAll(t, s)
	s.QueryNode.Release(s.CollectionID)
	loaded := cacheFiles(t, s)
	var index, columns []string
	for _, f := range loaded {
		if filepath.Dir(f) != "." && f[:8] == "columns/" {
			columns = append(columns, f)
		} else {
			index = append(index, f)
		}
	}
	require.Len(t, index, 1, "%v", loaded)
	require.NotEmpty(t, columns, "%v", loaded)

	require.NoError(t, querynode.CollectCache(ctx, s.QueryNode))
	require.ElementsMatch(t, loaded, cacheFiles(t, s), "a released collection keeps its files")

	// Files of segments and builds that do not exist, left by a node that
	// stopped, and one of no known shape.
	stale := []string{
		fmt.Sprintf("columns/%d/1/999999/101", s.CollectionID),
		"files/index_files/999998/1/1/999999/HNSW",
	}
	for _, k := range stale {
		plant(t, s, k)
	}
	plant(t, s, "notes/readme")

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.QueryNode.Run(runCtx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool { return len(cacheFiles(t, s)) == len(loaded)+1 }, 10*time.Second, 10*time.Millisecond,
		"the start collects the stale files: %v", cacheFiles(t, s))
	require.ElementsMatch(t, append(append([]string{}, loaded...), "notes/readme"), cacheFiles(t, s))

	// Drop the index while a read holds the loaded segment: its file goes,
	// the mapping reads on until released.
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 1, nil))
	segs, release := querynode.HoldSealed(s.QueryNode, s.CollectionID)
	require.NotEmpty(t, segs)
	addr, attached := querynode.AttachedIndexData(segs[0], vecField)
	require.True(t, attached)
	require.NoError(t, s.Data.DropIndex(ctx, s.CollectionID, "vec"))
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(mmapDir(s), index[0]))
		return os.IsNotExist(err)
	}, 10*time.Second, 10*time.Millisecond, "the dropped index's file is collected")
	require.Contains(t, mappedFile(t, addr), index[0], "still mapped (deleted) while held")
	stored, _ := querynode.AttachedVectors(segs[0], vecField)
	_ = stored[len(stored)-1]
	hits, _, _ := readAll(t, s)
	require.Equal(t, wantHits, hits, "the held segment still answers")
	release()
	require.ElementsMatch(t, append(append([]string{}, columns...), "notes/readme"), cacheFiles(t, s))

	// Drop the collection: every file of it goes.
	st, err := s.Proxy.DropCollection(ctx, &milvuspb.DropCollectionRequest{CollectionName: stacktest.Collection})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	require.Eventually(t, func() bool { return len(cacheFiles(t, s)) == 1 }, 10*time.Second, 10*time.Millisecond,
		"the dropped collection's files are collected: %v", cacheFiles(t, s))
	require.Equal(t, []string{"notes/readme"}, cacheFiles(t, s))
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(mmapDir(s), "columns"))
		return os.IsNotExist(err)
	}, 10*time.Second, 10*time.Millisecond, "and their directories")
}
