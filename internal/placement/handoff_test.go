package placement_test

import (
	"context"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/placement"
	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/storage"
)

// storedKeys reads the primary keys in a segment's insert logs.
func storedKeys(t *testing.T, s *stacktest.Stack, id int64) []int64 {
	t.Helper()
	info, ok := s.Segment(id)
	require.True(t, ok)
	c, err := storage.ReadField(context.Background(), s.Objects, storage.FieldLogs{
		Root: "files", Collection: info.CollectionID, Partition: info.PartitionID, ID: id, LogIDs: info.LogIDs(100),
	}, &schemapb.FieldSchema{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64})
	require.NoError(t, err)
	return c.(*column.Ints).Data
}

func keys(from, to int64) []int64 {
	var out []int64
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

// TestHandoffLosesAndDuplicatesNothing: data node 1 owns the vchannel,
// syncs part of what was written (another segment's rows keep the
// checkpoint behind) and dies. The placement moves the channel to node 2
// with the checkpoint; node 2 resumes from it, and every acknowledged row
// ends up in object storage exactly once.
func TestHandoffLosesAndDuplicatesNothing(t *testing.T) {
	s := stacktest.New(t)
	s.DataNodeConfig.SegmentBufferSize = 1000 // 10 rows stay buffered; 100 rows sync at once
	policy := placement.DefaultChannelPolicy()
	plan := placement.AssignChannels(nil, []int64{1}, s.VChannels, policy, false)
	require.Equal(t, map[string]int64{s.VChannels[0]: 1}, plan.Owners)

	s.CreatePartition("p2")
	z := s.InsertInto("p2", 1000, 1010) // buffered only: holds the checkpoint back
	x := s.Insert(0, 100)               // synced by node 1
	node1 := s.NewDataNode()
	s.RunDataNode(node1, func() bool { info, _ := s.Segment(x); return info.NumRows == 100 })
	// Node 1 is dead now (stopped without a final sync). Node 2 is live.

	moved := placement.AssignChannels(plan.Owners, []int64{2}, s.VChannels, policy, false)
	require.Equal(t, []placement.Move{{Channel: s.VChannels[0], From: 1, To: 2, Reason: placement.ReasonOwnerDead}}, moved.Moves)
	hs, err := placement.Handoffs(context.Background(), moved.Moves, s.Data)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	h := hs[0]
	cp, ok := s.Data.Checkpoint(s.VChannels[0])
	require.True(t, ok)
	require.Equal(t, cp, h.Checkpoint, "the new owner gets the channel checkpoint")
	xi, _ := s.Segment(x)
	require.Less(t, h.Checkpoint.Position.Offset, xi.SyncedOffset, "node 2 meets node 1's synced rows again")
	require.LessOrEqual(t, h.SeekOffset, h.Checkpoint.Position.Offset, "node 2 starts at or before the checkpoint")
	require.True(t, slices.ContainsFunc(h.Segments, func(si catalog.SegmentInfo) bool { return si.ID == z }),
		"the unflushed segment whose rows only node 1 had buffered is handed over")

	s.Insert(100, 150) // acknowledged while the channel moves
	ids, ts := s.Seal()
	node2 := s.NewDataNode() // starts the channel from the recovery info handed over
	s.RunDataNode(node2, func() bool { return s.FlushState(ids, s.VChannels, ts) })

	xk := storedKeys(t, s, x)
	slices.Sort(xk)
	require.Equal(t, keys(0, 150), xk, "every row of x exactly once")
	require.Equal(t, keys(1000, 1010), storedKeys(t, s, z), "the rows node 1 never synced are not lost")
}
