package coordrpc_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/errcode"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	"github.com/strata-db/strata/internal/stacktest"
)

// Field IDs of stacktest's collection.
const (
	pkField  = 100
	vecField = 101
)

// serveStack serves the stack's coordinators, ID allocator and WAL writer
// and returns clients of them.
func serveStack(t *testing.T, s *stacktest.Stack) clients {
	t.Helper()
	c, _ := serveCoord(t, rpc.ClientDefaults(),
		coordrpc.NewDataCoordServer(s.Data, s.Data, s.Data, s.Data, s.Data),
		coordrpc.NewRootCoordServer(s.Root),
		coordrpc.NewClockServer(s.IDs, s.IDs, s.Writer()))
	return c
}

// opened is the stack's object storage, noting the files opened as
// streams (index files).
type opened struct {
	*objlocal.Store
	mu   sync.Mutex
	keys []string
}

func (o *opened) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	o.mu.Lock()
	o.keys = append(o.keys, key)
	o.mu.Unlock()
	return o.Store.Open(ctx, key)
}

// seen returns the keys opened so far.
func (o *opened) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.keys...)
}

// remoteQueryNode is a query node over the clients, on the stack's WAL
// and object storage, closed at cleanup (before the server stops).
func remoteQueryNode(t *testing.T, s *stacktest.Stack, c clients) (*querynode.Node, *opened) {
	t.Helper()
	cfg := querynode.Defaults()
	cfg.Mmap.Dir = t.TempDir()
	objects := &opened{Store: s.Objects}
	qn := querynode.New(cfg, s.Log, objects, c.data, c.root, c.clock, nil, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { require.NoError(t, qn.Close()) })
	return qn, objects
}

// runDataNode runs a data node over the clients (its flowgraph, index
// builder and compactor) until done holds.
func runDataNode(t *testing.T, s *stacktest.Stack, c clients, done func() bool) {
	t.Helper()
	dn, err := datanode.New(s.DataNodeConfig, s.Log, s.Objects, c.data, c.root, c.clock, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = dn.Run(ctx) })
	wg.Go(func() { _ = dn.RunIndexBuilder(ctx, c.data, "remote") })
	wg.Go(func() { _ = dn.RunCompactor(ctx, c.data, "remote") })
	defer func() {
		cancel()
		wg.Wait()
	}()
	require.Eventually(t, done, 30*time.Second, 10*time.Millisecond, "the remote data node did not get there")
}

// createIndex creates an HNSW index on the vector field through the proxy.
func createIndex(t *testing.T, s *stacktest.Stack) {
	t.Helper()
	st, err := s.Proxy.CreateIndex(context.Background(), &milvuspb.CreateIndexRequest{
		CollectionName: stacktest.Collection, FieldName: "vec",
		ExtraParams: []*commonpb.KeyValuePair{
			{Key: "index_type", Value: "HNSW"},
			{Key: "metric_type", Value: "L2"},
			{Key: "M", Value: "8"},
			{Key: "efConstruction", Value: "32"},
		},
	})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
}

// built reports whether every flushed segment of the collection has a
// finished index build (a planned one has no files yet).
func built(t *testing.T, s *stacktest.Stack) bool {
	t.Helper()
	n := 0
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.State != catalog.SegmentFlushed || seg.Level == catalog.LevelL0 {
			continue
		}
		tasks, err := s.Data.SegmentIndexes(context.Background(), seg.ID)
		require.NoError(t, err)
		if !slices.ContainsFunc(tasks, func(task catalog.IndexTask) bool { return task.State == catalog.IndexFinished }) {
			return false
		}
		n++
	}
	return n > 0
}

// TestNodesThroughRemoteCoordinator: a data node and a query node whose
// coordinator roles are the clients do what they do in process: the data
// node syncs and flushes inserted rows and builds their index, the query
// node loads the sealed segments with their index and replays the rest,
// and both query nodes answer searches and queries alike.
func TestNodesThroughRemoteCoordinator(t *testing.T) {
	s := stacktest.New(t)
	c := serveStack(t, s)
	ctx := context.Background()

	s.Insert(0, 100)
	ids, ts := s.Seal()
	runDataNode(t, s, c, func() bool { return s.FlushState(ids, s.VChannels, ts) })
	for _, id := range ids {
		require.Equal(t, "Flushed", s.State(id))
	}
	// The index is built by a second remote data node, which resumes the
	// channel from the checkpoint the first one reported.
	createIndex(t, s)
	runDataNode(t, s, c, func() bool { return built(t, s) })
	s.Insert(100, 150) // growing: only in the WAL

	remote, objects := remoteQueryNode(t, s, c)
	require.NoError(t, remote.Load(ctx, s.CollectionID, nil, 1, nil))
	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 1, nil))
	require.NoError(t, remote.WaitLoad(ctx, s.CollectionID))
	require.NoError(t, s.QueryNode.WaitLoad(ctx, s.CollectionID))
	failure, err := remote.LoadFailure(ctx, s.CollectionID)
	require.NoError(t, err)
	require.NoError(t, failure)
	local, err := s.QueryNode.Segments(ctx, s.CollectionID)
	require.NoError(t, err)
	served, err := remote.Segments(ctx, s.CollectionID)
	require.NoError(t, err)
	require.Equal(t, local, served)
	var files []string
	for _, id := range ids {
		tasks, err := s.Data.SegmentIndexes(ctx, id)
		require.NoError(t, err)
		for _, task := range tasks {
			files = append(files, task.Files...)
		}
	}
	require.NotEmpty(t, files)
	require.Subset(t, objects.seen(), files, "the sealed segments' index files were found through the client")

	read := plan.Read{CollectionID: s.CollectionID, Strong: true, OutputFields: []int64{pkField}}
	count := &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, CountOnly: true}
	want, err := s.QueryNode.Query(ctx, count)
	require.NoError(t, err)
	got, err := remote.Query(ctx, count)
	require.NoError(t, err)
	require.EqualValues(t, 150, want.Count)
	require.Equal(t, want.Count, got.Count)

	q := &plan.Query{Read: read, Limit: 1000}
	wantQ, err := s.QueryNode.Query(ctx, q)
	require.NoError(t, err)
	gotQ, err := remote.Query(ctx, q)
	require.NoError(t, err)
	require.ElementsMatch(t, wantQ.Fields[pkField].(*column.Ints).Data, gotQ.Fields[pkField].(*column.Ints).Data)

	search := &plan.Search{Read: read, FieldID: vecField, Metric: "L2", Vectors: [][]float32{{3, 1}, {120, 1}}, TopK: 5}
	wantS, err := s.QueryNode.Search(ctx, search)
	require.NoError(t, err)
	gotS, err := remote.Search(ctx, search)
	require.NoError(t, err)
	require.Equal(t, wantS.Hits, gotS.Hits)
	require.EqualValues(t, 3, gotS.Hits[0][0].PK)
	require.EqualValues(t, 120, gotS.Hits[1][0].PK, "a growing row, replayed through the remote recovery")
}

// TestCoordinatorDown: with the coordinator unreachable every client
// method fails with a retriable code, never with an empty answer; a query
// node's load fails, and a data node reports its pchannel failing.
func TestCoordinatorDown(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	cfg := rpc.ClientDefaults()
	cfg.Timeout = 5 * time.Second
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, 5*time.Millisecond
	pool, err := rpc.NewPool(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, pool.Close()) })
	c := dial(t, pool, addr)
	ctx := context.Background()

	unavailable := func(t *testing.T, err error) {
		t.Helper()
		require.Error(t, err)
		require.Equal(t, rpc.CodeServiceUnavailable, errcode.CodeOf(err), "%v", err)
		require.True(t, rpc.RetriableCode(errcode.CodeOf(err)))
	}
	calls := map[string]func() error{
		"Recovery": func() error { _, err := c.data.Recovery(ctx, "v"); return err },
		"Segment":  func() error { _, _, err := c.data.Segment(ctx, 1); return err },
		"SegmentIndexes": func() error {
			_, err := c.data.SegmentIndexes(ctx, 1)
			return err
		},
		"Indexes":         func() error { _, err := c.data.Indexes(ctx, 1); return err },
		"Synced":          func() error { return c.data.Synced(ctx, catalog.SyncReport{}) },
		"ClaimIndexTask":  func() error { _, _, _, err := c.data.ClaimIndexTask(ctx, "b", time.Millisecond); return err },
		"FinishIndexTask": func() error { return c.data.FinishIndexTask(ctx, 1, 1, nil, 0, nil) },
		"ClaimCompaction": func() error { _, _, err := c.data.ClaimCompaction(ctx, "remote", time.Millisecond); return err },
		"CompleteCompaction": func() error {
			return c.data.CompleteCompaction(ctx, catalog.CompactionResult{}, nil)
		},
		"CollectionByID": func() error { _, err := c.root.CollectionByID(1); return err },
		"AllCollections": func() error { _, err := c.root.AllCollections(ctx); return err },
		"ExpireBefore":   func() error { _, err := c.root.ExpireBefore(ctx, 1); return err },
		"Allocate":       func() error { _, err := c.clock.Allocate(ctx, 1); return err },
		"Tick":           func() error { _, err := c.clock.Tick(ctx, "p"); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) { unavailable(t, call()) })
	}

	s := stacktest.New(t) // its WAL and object storage; its coordinators are not served
	qn, _ := remoteQueryNode(t, s, c)
	err = qn.Load(ctx, s.CollectionID, nil, 1, nil)
	unavailable(t, err)
	loaded, _, err := qn.Loaded(ctx, s.CollectionID)
	require.NoError(t, err, "the node answers for itself")
	require.False(t, loaded)

	dn, err := datanode.New(s.DataNodeConfig, s.Log, s.Objects, c.data, c.root, c.clock, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- dn.Run(runCtx) }()
	require.Eventually(t, func() bool { return len(dn.Problems()) > 0 }, 10*time.Second, 10*time.Millisecond,
		"the data node reports its pchannel failing")
	cancel()
	require.NoError(t, <-done)
}

// TestRemoteQueryNodeCollectsOnDrop: a query node whose data coordinator
// is the client collects a dropped index's mmap cache file at the drop
// (DataCoordService.WaitDropped), not on its hourly timer.
func TestRemoteQueryNodeCollectsOnDrop(t *testing.T) {
	s := stacktest.New(t)
	c := serveStack(t, s)
	ctx := context.Background()
	s.Insert(0, 100)
	ids, ts := s.Seal()
	runDataNode(t, s, c, func() bool { return s.FlushState(ids, s.VChannels, ts) })
	createIndex(t, s)
	runDataNode(t, s, c, func() bool { return built(t, s) })

	cfg := querynode.Defaults()
	cfg.Mmap.Dir = t.TempDir()
	cfg.Mmap.VectorIndex = true
	cfg.Mmap.CollectInterval = time.Hour // only the start and the drops
	qn := querynode.New(cfg, s.Log, s.Objects, c.data, c.root, c.clock, nil, slog.New(slog.DiscardHandler))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- qn.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-done)
		require.NoError(t, qn.Close())
	})
	require.NoError(t, qn.Load(ctx, s.CollectionID, nil, 1, nil))
	require.NoError(t, qn.WaitLoad(ctx, s.CollectionID))
	qn.Release(s.CollectionID)
	indexFiles := func() []string {
		var out []string
		require.NoError(t, filepath.WalkDir(cfg.Mmap.Dir, func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed by the collector while walked
			}
			if err == nil && !d.IsDir() && strings.HasSuffix(p, "HNSW") {
				out = append(out, p)
			}
			return err
		}))
		return out
	}
	require.NotEmpty(t, indexFiles(), "the load mapped the index from the cache")
	time.Sleep(100 * time.Millisecond) // a released collection keeps its files
	require.NotEmpty(t, indexFiles())

	st, err := s.Proxy.DropIndex(ctx, &milvuspb.DropIndexRequest{CollectionName: stacktest.Collection, FieldName: "vec"})
	require.NoError(t, err)
	require.Zero(t, st.GetCode(), st.GetReason())
	require.Eventually(t, func() bool { return len(indexFiles()) == 0 }, 20*time.Second, 10*time.Millisecond,
		"the dropped index's cache file is collected at the drop")
}
