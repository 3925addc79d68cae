package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"
)

// TestReadyWhileReloading: a server killed with SIGKILL serves again
// before the collection it had loaded is loaded again. One binlog of the
// sealed segment is replaced by a named pipe, so the reload waits on it
// for as long as the test wants: meanwhile /healthz is ready,
// /healthz/detail lists the collection as loading, ListCollections and
// GetLoadState (Loading, with its progress) answer, a search is refused
// with 101 rather than answered from part of the data, and an insert is
// accepted. Once the pipe gives the binlog, the collection turns Loaded and
// a Strong count sees every acknowledged row. (Before, the server did not
// answer /healthz until the reload had read the pipe.)
func TestReadyWhileReloading(t *testing.T) {
	const coll, sealed, walOnly, during = "ready", 3000, 500, 100
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	p := startProc(t, bin, dir)
	c := p.client(t)
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(8))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(1)))
	indexAndLoad(ctx, t, c, coll, entity.L2)
	insert := func(c *milvusclient.Client, from, n int) {
		t.Helper()
		ids := make([]int64, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i] = int64(from + i)
			vecs[i] = []float32{float32(from + i), 1, 2, 3, 4, 5, 6, 7}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
			WithInt64Column("id", ids).WithFloatVectorColumn("vec", 8, vecs))
		require.NoError(t, err)
	}
	insert(c, 0, sealed)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	insert(c, sealed, walOnly) // acknowledged, in the WAL only
	p.kill(t)

	// The timestamp column of a sealed segment: every load reads it.
	logs, err := filepath.Glob(filepath.Join(dir, "storage", "files", "insert_log", "*", "*", "*", "1", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	pipe := logs[0]
	data, err := os.ReadFile(pipe)
	require.NoError(t, err)
	require.NoError(t, os.Remove(pipe))
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	fed := make(chan error, 1)
	feed := func() {
		go func() {
			f, err := os.OpenFile(pipe, os.O_WRONLY, 0) // waits for the reader
			if err == nil {
				_, err = f.Write(data)
				err = errors.Join(err, f.Close())
			}
			fed <- err
		}()
	}
	t.Cleanup(func() { // a writer still waiting for a reader is let go
		if f, err := os.OpenFile(pipe, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})

	p = startProcReady(t, bin, dir)
	c = p.client(t)
	require.Equal(t, []string{coll}, loadingCollections(t, p), "/healthz/detail while the segment waits")
	names, err := c.ListCollections(ctx, milvusclient.NewListCollectionOption())
	require.NoError(t, err)
	require.Equal(t, []string{coll}, names)
	st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
	require.NoError(t, err, "GetLoadState (and GetLoadingProgress) while loading")
	require.Equal(t, entity.LoadStateLoading, st.State)
	require.Less(t, st.Progress, int64(100))
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 3, []entity.Vector{entity.FloatVector(make([]float32, 8))}).
		WithConsistencyLevel(entity.ClStrong))
	require.Error(t, err, "a search while loading")
	require.Contains(t, err.Error(), "still loading")
	require.Equal(t, int32(codeCollectionNotLoaded), merr.Code(err), "%v", err)
	insert(c, sealed+walOnly, during) // writes go on while loading

	feed()
	require.NoError(t, <-fed)
	for {
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		require.NoError(t, err)
		if st.State == entity.LoadStateLoaded {
			break
		}
		require.Equal(t, entity.LoadStateLoading, st.State)
		require.NoError(t, ctx.Err(), "never Loaded")
		time.Sleep(20 * time.Millisecond)
	}
	n, err := countStrong(ctx, c, coll)
	require.NoError(t, err)
	require.EqualValues(t, sealed+walOnly+during, n, "every acknowledged row once Loaded")
	require.Empty(t, loadingCollections(t, p))
	// The binlog is a file again, for whatever reads it next.
	require.NoError(t, os.WriteFile(pipe+".tmp", data, 0o644))
	require.NoError(t, os.Rename(pipe+".tmp", pipe))
}

// loadingCollections returns what /healthz/detail lists as loading.
func loadingCollections(t *testing.T, p *proc) []string {
	t.Helper()
	resp, err := http.Get("http://" + p.metrics + "/healthz/detail")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var d struct {
		Loading []string `json:"loading"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&d))
	return d.Loading
}
