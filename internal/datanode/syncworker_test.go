package datanode_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/datanode"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/stacktest"
)

// slowStore is the real object store, except that a Put of a key under
// prefix waits until release is closed (or its context ends), as a write
// to a throttled bucket can.
type slowStore struct {
	*objlocal.Store
	prefix  string
	once    sync.Once
	entered chan struct{} // closed when the first held Put starts
	release chan struct{}
}

func (s *slowStore) Put(ctx context.Context, key string, data []byte) error {
	if strings.HasPrefix(key, s.prefix) {
		s.once.Do(func() { close(s.entered) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.Put(ctx, key, data)
}

// createOther creates a second collection like stacktest's (one shard, on
// the stack's only pchannel), inserts rows [0, n) and returns its ID,
// vchannels and the growing segment that took them.
func createOther(t *testing.T, s *stacktest.Stack, n int64) (int64, []string, int64) {
	t.Helper()
	col := s.CreateCollection("other")
	s.InsertRows("other", 0, n)
	segs := s.Data.Segments(col.ID)
	require.Len(t, segs, 1)
	return col.ID, col.VChannels, segs[0].ID
}

// waitFor polls cond; the limit only keeps a broken build from hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowStoreStallsOnlyItsVChannel: two collections share a pchannel.
// While the object store holds every write of the first one, the data node
// still consumes the pchannel and flushes the second one. The first one's
// checkpoint stays behind its rows all along; killed in that state, a
// restarted data node writes them, and every row is stored exactly once.
func TestSlowStoreStallsOnlyItsVChannel(t *testing.T) {
	s := stacktest.New(t)
	ctx := context.Background()
	segA := s.Insert(0, 10)
	collB, vchB, segB := createOther(t, s, 10)
	idsA, tsA := s.Seal()
	idsB, tsB, err := s.Data.Flush(ctx, collB, vchB)
	require.NoError(t, err)

	slow := &slowStore{
		Store: s.Objects, prefix: "files/insert_log/" + strconv.FormatInt(s.CollectionID, 10) + "/",
		entered: make(chan struct{}), release: make(chan struct{}),
	}
	dn, err := datanode.New(s.DataNodeConfig, s.Log, slow, s.Data, s.Root, s.IDs, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	runCtx, kill := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = dn.Run(runCtx) })
	defer func() { kill(); wg.Wait() }()

	select {
	case <-slow.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the first collection's flush never wrote")
	}
	waitFor(t, "the second collection is flushed while the first one's write is held", func() bool {
		return s.FlushState(idsB, vchB, tsB)
	})
	require.Equal(t, catalog.SegmentSealed.String(), s.State(segA), "the held flush has not completed")
	info, ok := s.Segment(segA)
	require.True(t, ok)
	require.NotNil(t, info.StartPosition, "the start position was reported before the held sync")
	cp, ok := s.Data.Checkpoint(s.VChannels[0])
	require.True(t, ok)
	require.LessOrEqual(t, cp.Position.Offset, info.StartPosition.Offset,
		"the checkpoint does not pass rows whose files are not durable")

	// Killed while the write is held: the queued sync is lost, the WAL is not.
	kill()
	wg.Wait()
	require.Equal(t, catalog.SegmentSealed.String(), s.State(segA))
	s.RunDataNode(s.NewDataNode(), func() bool { return s.FlushState(idsA, s.VChannels, tsA) })
	for _, seg := range []int64{segA, segB} {
		keys := storedKeys(t, s, seg)
		slices.Sort(keys)
		require.Equal(t, keyRange(0, 10), keys, "segment %d: every row once", seg)
	}
}
