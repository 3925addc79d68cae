package e2e

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/version"
)

// TestConfigFileBinary runs the binary with a --config file: the file's
// rootPath is where the data node writes and where the query node reads
// after a restart, the flags given win over the file's addresses, the
// server reports version.Milvus, and `strata config` / `strata --help`
// exit 0 while an invalid file exits 1 naming the key.
func TestConfigFileBinary(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(t.TempDir(), "strata.json")
	// "addr" would not bind (port 1 is privileged); the --addr flag wins.
	require.NoError(t, os.WriteFile(cfgPath, []byte(`{
		"addr": "127.0.0.1:1", "rootPath": "data",
		"rootCoord": {"pChannels": 2},
		"dataCoord": {"checkInterval": "200ms"},
		"dataNode": {"syncPeriod": "1s"},
		"proxy": {"boundedStaleness": "1s"},
		"walWriter": {"tickInterval": "100ms"}
	}`), 0o644))

	for _, args := range [][]string{{"--help"}, {"help", "standalone"}, {"version"}, {"config", "--config", cfgPath}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"dataNode": {"syncPeriod": 10}}`), 0o644))
	for _, args := range [][]string{{"config", "--config", bad}, {"standalone", "--config", bad, "--data-dir", t.TempDir()}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v: %v %s", args, err, out)
		require.Equal(t, 1, ee.ExitCode())
		require.Contains(t, string(out), `dataNode.syncPeriod: a duration is a string`)
	}

	p := startProc(t, bin, dir, "--config", cfgPath)
	c := p.client(t)
	ctx := ctxT(t)
	v, err := c.GetServerVersion(ctx, milvusclient.NewGetServerVersionOption())
	require.NoError(t, err)
	require.Equal(t, version.Milvus, v)

	const coll = "configured"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	_, err = c.Insert(ctx, insertOption(coll, genMovies(0, 200, rand.New(rand.NewPCG(5, 6)))))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	task, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewFlatIndex(entity.L2)))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))

	insertLogs, err := filepath.Glob(filepath.Join(dir, "storage", "data", "insert_log", "*", "*", "*", "*", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, insertLogs, "binlogs under the configured rootPath")
	_, err = os.Stat(filepath.Join(dir, "storage", "files"))
	require.True(t, os.IsNotExist(err), "nothing under the default root path")
	require.Equal(t, 0, p.term(t))

	// After a restart the query node loads the flushed segments from there.
	p = startProc(t, bin, dir, "--config", cfgPath)
	c = p.client(t)
	lt, err = c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 200, n)
	require.Equal(t, 0, p.term(t))
}
