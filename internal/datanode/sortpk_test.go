package datanode_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/storage"
)

// segmentKeys reads a flushed segment's primary keys in the order its
// binlogs hold them.
func segmentKeys(t *testing.T, s *stacktest.Stack, seg catalog.SegmentInfo) []int64 {
	t.Helper()
	coll, err := s.Root.CollectionByID(s.CollectionID)
	require.NoError(t, err)
	pk := coll.PKField()
	c, err := storage.ReadField(context.Background(), s.Objects, storage.FieldLogs{
		Root: "files", Collection: seg.CollectionID, Partition: seg.PartitionID, ID: seg.ID,
		LogIDs: seg.LogIDs(pk.GetFieldID()), Rows: seg.FieldLogRows(),
	}, pk)
	require.NoError(t, err)
	return c.(*column.Ints).Data
}

func flushedL1(s *stacktest.Stack) []catalog.SegmentInfo {
	var out []catalog.SegmentInfo
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.Level == catalog.LevelL1 && seg.State == catalog.SegmentFlushed {
			out = append(out, seg)
		}
	}
	return out
}

// A segment flushed in one batch is written in primary-key order and
// recorded as sorted, whatever order its rows arrived in; one synced in
// several batches is not sorted until a compaction rewrites it, and the
// rewrite is sorted and keeps every row.
func TestSegmentsAreSortedByPrimaryKey(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(50, 60)
	s.Insert(0, 10)
	s.Insert(20, 30)
	s.Flush()
	segs := flushedL1(s)
	require.Len(t, segs, 1)
	require.True(t, segs[0].Sorted)
	require.True(t, segs[0].IsSorted())
	require.Equal(t, append(append(keyRange(0, 10), keyRange(20, 30)...), keyRange(50, 60)...), segmentKeys(t, s, segs[0]))

	s.DataNodeConfig.SegmentBufferSize = 1 // every insert syncs a batch of its own
	s.Insert(200, 210)
	s.Insert(100, 110)
	s.Insert(150, 160)
	s.RunDataNode(s.NewDataNode(), func() bool {
		for _, seg := range s.Data.Segments(s.CollectionID) {
			if seg.State == catalog.SegmentGrowing && seg.NumRows == 30 {
				return true
			}
		}
		return false
	})
	s.Flush()
	var multi catalog.SegmentInfo
	for _, seg := range flushedL1(s) {
		if seg.ID != segs[0].ID {
			multi = seg
		}
	}
	require.Greater(t, len(multi.Binlogs[1]), 1, "synced in several batches")
	require.False(t, multi.Sorted)
	require.False(t, multi.IsSorted())

	s.Compact()
	var keys []int64
	for _, seg := range flushedL1(s) {
		require.True(t, seg.Sorted, "segment %d", seg.ID)
		got := segmentKeys(t, s, seg)
		require.IsNonDecreasing(t, got)
		keys = append(keys, got...)
	}
	require.ElementsMatch(t, append(append(append(keyRange(0, 10), keyRange(20, 30)...), keyRange(50, 60)...),
		append(append(keyRange(100, 110), keyRange(150, 160)...), keyRange(200, 210)...)...), keys)
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 60, s.Count())
}
