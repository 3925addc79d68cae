package querynode_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/stacktest"
)

// A segment that is Sealed when a load takes its view and Flushed by the
// time the replay reaches its inserts keeps its rows visible (as a growing
// segment) until its flushed copy is loaded, then is served from that copy.
func TestReplayedSegmentFlushedDuringLoad(t *testing.T) {
	s := stacktest.New(t)
	x := s.Insert(0, 100)
	s.Seal() // the data node is not running
	require.Equal(t, "Sealed", s.State(x))

	release := s.QNObjects.HoldAllBut() // the handoff cannot load it yet
	s.QNSegments.AfterNextRecovery(func() {
		s.RunDataNode(s.NewDataNode(), func() bool { return s.State(x) == "Flushed" })
	})
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 100, s.Count(), "rows of a segment flushed during the load are visible before its handoff")
	require.Equal(t, map[int64]bool{x: true}, s.Served())

	release()
	require.Eventually(t, func() bool { served := s.Served(); return len(served) == 1 && !served[x] },
		10*time.Second, 10*time.Millisecond, "the flushed copy replaces the growing one")
	require.EqualValues(t, 100, s.Count())
}

// A segment that is Sealed when a load takes its view, and flushed and
// compacted away before the replay reaches its inserts, is served through
// the compaction output from the moment the load is done: its rows are
// neither missing nor counted twice.
func TestReplayedSegmentCompactedDuringLoad(t *testing.T) {
	s := stacktest.New(t)
	a := s.Insert(0, 100)
	s.Flush()
	x := s.Insert(100, 250)
	s.Seal()

	s.QNSegments.AfterNextRecovery(func() {
		s.RunDataNode(s.NewDataNode(), func() bool { return s.State(x) == "Flushed" })
		s.Compact()
		require.Equal(t, "Dropped", s.State(a))
		require.Equal(t, "Dropped", s.State(x))
	})
	// The compaction output's files are slow to read: the load must not be
	// done (and serve reads) before it serves them.
	release := s.QNObjects.HoldAllBut(a)
	loaded := make(chan error, 1)
	go func() { loaded <- s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil) }()
	select {
	case err := <-loaded:
		require.NoError(t, err)
		require.EqualValues(t, 250, s.Count(), "rows of a segment compacted during the load are visible once it is done")
		release()
	case <-time.After(300 * time.Millisecond):
		release()
		require.NoError(t, <-loaded)
	}
	require.EqualValues(t, 250, s.Count(), "rows of a segment compacted during the load are visible once it is done")
	served := s.Served()
	require.Len(t, served, 1, "only the compaction output is served: %v", served)
	for id, growing := range served {
		require.False(t, growing)
		require.NotContains(t, []int64{a, x}, id)
	}
}
