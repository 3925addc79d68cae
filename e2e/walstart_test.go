package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// walFiles lists the segment files of every pchannel under a data dir's WAL.
func walFiles(t *testing.T, dataDir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	chans, err := os.ReadDir(filepath.Join(dataDir, "wal"))
	require.NoError(t, err)
	for _, ch := range chans {
		if !ch.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dataDir, "wal", ch.Name(), "*.wal"))
		require.NoError(t, err)
		for _, f := range files {
			out[ch.Name()] = append(out[ch.Name()], filepath.Base(f))
		}
	}
	return out
}

// TestLoadAfterWALTruncation creates a collection after its pchannel's first
// WAL file was truncated away: its vchannels start where the pchannel was at
// creation, so loading it must not seek below the WAL's start (it used to
// seek offset 0, fail with "offset truncated" and hang every read).
func TestLoadAfterWALTruncation(t *testing.T) {
	standaloneOnly(t, "watches the local WAL's files be truncated (a coordinator keeps the WAL whole)")
	dir := t.TempDir()
	s := startServer(t, dir, func(c *app.Config) {
		c.WAL.SegmentSize = 64 << 10
		c.DataNode.CheckpointInterval = 100 * time.Millisecond
	})
	c := s.client(t)
	ctx := ctxT(t)
	// 16 shards: every pchannel carries a vchannel of "first".
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("first", moviesSchema("first")).
		WithShardNum(16)))
	rng := rand.New(rand.NewPCG(7, 8))
	truncated := func() bool {
		for _, files := range walFiles(t, dir) {
			if len(files) > 0 && files[0] != "00000000000000000000.wal" {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(45 * time.Second)
	for i := 0; !truncated(); i++ {
		require.True(t, time.Now().Before(deadline), "no WAL file was truncated: %v", walFiles(t, dir))
		_, err := c.Insert(ctx, insertOption("first", genMovies(i*500, 500, rng)))
		require.NoError(t, err)
		if i%4 == 3 {
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption("first"))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
			time.Sleep(300 * time.Millisecond)
		}
	}

	for _, name := range []string{"second", "third"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, moviesSchema(name)).
			WithShardNum(16)))
		_, err := c.Insert(ctx, insertOption(name, genMovies(0, 100, rng)))
		require.NoError(t, err)
		indexVectors(ctx, t, c, name, entity.L2)
		lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		lt, err := c.LoadCollection(lctx, milvusclient.NewLoadCollectionOption(name))
		require.NoError(t, err, "load %s", name)
		require.NoError(t, lt.Await(lctx), "load %s", name)
		rs, err := c.Query(lctx, milvusclient.NewQueryOption(name).WithOutputFields("count(*)").
			WithConsistencyLevel(entity.ClStrong))
		cancel()
		require.NoError(t, err, "query %s", name)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		require.EqualValues(t, 100, n, "rows of %s", name)
	}
	// And after a restart, from the checkpoints and start positions.
	s.stop()
	s = startServer(t, dir)
	c = s.client(t)
	for _, name := range []string{"second", "third"} {
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(name))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(name).WithOutputFields("count(*)").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		n, err := rs.GetColumn("count(*)").GetAsInt64(0)
		require.NoError(t, err)
		require.EqualValues(t, 100, n, "rows of %s after restart", name)
	}
}
