package datanode_test

import (
	"context"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/storage"
)

// storedKeys reads the primary keys in a segment's insert logs.
func storedKeys(t *testing.T, s *stacktest.Stack, id int64) []int64 {
	t.Helper()
	info, ok := s.Segment(id)
	require.True(t, ok)
	c, err := storage.ReadField(context.Background(), s.Objects, storage.FieldLogs{
		Root: "files", Collection: info.CollectionID,
		Partition: info.PartitionID, ID: id, LogIDs: info.LogIDs(100),
	},
		&schemapb.FieldSchema{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64})
	require.NoError(t, err)
	return c.(*column.Ints).Data
}

// storedDeletes reads the keys of every L0 segment's delta logs.
func storedDeletes(t *testing.T, s *stacktest.Stack) []int64 {
	t.Helper()
	var out []int64
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.Level != catalog.LevelL0 {
			continue
		}
		for _, l := range seg.Deltalogs {
			data, err := s.Objects.Get(context.Background(), storage.DeltaLogKey("files", seg.CollectionID, seg.PartitionID, seg.ID, l.LogID))
			require.NoError(t, err)
			pks, _, err := storage.DecodeDeltaLog(data)
			require.NoError(t, err)
			out = append(out, pks.(*column.Ints).Data...)
		}
	}
	return out
}

func keyRange(from, to int64) []int64 {
	var out []int64
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

// A data node that stops (a crash) after syncing some rows and deletes
// while the channel checkpoint stays behind them (another segment's rows are
// still only in memory) replays the WAL from the checkpoint when it comes
// back: the rows and deletes it synced are skipped, the rest is written, and
// every row and delete ends up in storage exactly once.
func TestRestartWritesNothingTwice(t *testing.T) {
	s := stacktest.New(t)
	s.DataNodeConfig.SegmentBufferSize = 1000 // 10 rows stay buffered; 100 rows or 100 deletes sync at once
	s.CreatePartition("p2")
	z := s.InsertInto("p2", 1000, 1010) // buffered: holds the checkpoint back
	s.Delete(5000, 5100)                // synced as an L0 segment
	x := s.Insert(0, 100)               // synced; x stays Growing

	s.RunDataNode(s.NewDataNode(), func() bool {
		info, _ := s.Segment(x)
		return info.NumRows == 100 && len(storedDeletes(t, s)) == 100
	})
	xi, _ := s.Segment(x)
	cp, ok := s.Data.Checkpoint(s.VChannels[0])
	require.True(t, ok)
	require.Equal(t, "Growing", s.State(x))
	require.Equal(t, "Growing", s.State(z))
	require.Less(t, cp.Position.Offset, xi.SyncedOffset, "the replay meets the synced insert again")
	require.Less(t, cp.Position.Offset, cp.DeltaSyncedOffset, "the replay meets the synced delete again")

	s.Insert(100, 150)
	s.Flush() // a fresh data node: replays from the checkpoint
	require.Equal(t, "Flushed", s.State(x))
	require.Equal(t, "Flushed", s.State(z))
	xk := storedKeys(t, s, x)
	slices.Sort(xk)
	require.Equal(t, keyRange(0, 150), xk, "every row of x once")
	require.Equal(t, keyRange(1000, 1010), storedKeys(t, s, z))
	dk := storedDeletes(t, s)
	slices.Sort(dk)
	require.Equal(t, keyRange(5000, 5100), dk, "every delete once")
	xi, _ = s.Segment(x)
	require.EqualValues(t, 150, xi.NumRows)
}

// A data node restarted in the middle of a run of upserts (each one WAL
// record: the delete of the old row and the insert of the new one, at one
// timestamp), after it synced the rows and deletes of some of them while
// older rows kept the checkpoint behind, leaves every key with exactly one
// live row and every delete written once.
func TestRestartAmidUpserts(t *testing.T) {
	s := stacktest.New(t)
	s.DataNodeConfig.SegmentBufferSize = 200 // every upsert's rows and deletes sync at its end
	s.CreatePartition("p2")
	s.Insert(0, 40)
	s.Flush()
	s.InsertInto("p2", 1000, 1002) // buffered: holds the checkpoint back
	for i := range 3 {
		s.Upsert(int64(i*4), int64(i*4+20))
	}
	x := s.InsertInto("", 2000, 2001) // the growing segment the upserts' rows went to
	s.Delete(2000, 2001)
	s.RunDataNode(s.NewDataNode(), func() bool { info, _ := s.Segment(x); return info.NumRows >= 60 })
	for i := 3; i < 6; i++ {
		s.Upsert(int64(i*4), int64(i*4+20))
	}
	s.Flush()
	dk := storedDeletes(t, s)
	require.Len(t, dk, 121, "each upsert's 20 deletes, and the delete, once")
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 42, s.Count(), "42 keys, each live once")
	require.Equal(t, append(keyRange(0, 40), 1000, 1001), s.Keys())
}

// The data node records where a growing segment's rows start as soon as it
// buffers its first insert, without syncing: L0 segments synced before that
// point can be compacted while the segment is still growing (an unknown
// start would hold back every L0 segment of the vchannel).
func TestStartPositionReportedOnFirstInsert(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 10)
	s.Delete(0, 5)
	s.Flush() // the rows flushed, the deletes in an L0 segment
	x := s.Insert(10, 20)
	cp, _ := s.Data.Checkpoint(s.VChannels[0])
	s.RunDataNode(s.NewDataNode(), func() bool { info, _ := s.Segment(x); return info.StartPosition != nil })
	info, _ := s.Segment(x)
	require.Zero(t, info.NumRows, "nothing synced")
	require.GreaterOrEqual(t, info.StartPosition.Offset, cp.Position.Offset)
	after, _ := s.Data.Checkpoint(s.VChannels[0])
	require.Equal(t, cp.Position.Offset, after.Position.Offset, "the checkpoint does not move past buffered rows")

	id, err := s.Data.ManualCompaction(context.Background(), s.CollectionID, 0)
	require.NoError(t, err)
	_, _, _, plans := s.CompactionState(id)
	var types []string
	for _, p := range plans {
		types = append(types, p.Type.String())
	}
	require.Contains(t, types, catalog.CompactionL0.String(), "the L0 segment is eligible while x grows")
}

// The deletes of upserts sync as L0 segments once they pass the buffer
// size, at the end of an upsert record (never between its delete and its
// insert), without waiting for a flush: the checkpoint, and the WAL
// truncation behind it, move on under an upsert-only load.
func TestUpsertDeletesSyncBySize(t *testing.T) {
	s := stacktest.New(t)
	s.DataNodeConfig.SegmentBufferSize = 200 // 13 deletes
	s.Insert(0, 40)
	s.Flush()
	for i := range 4 {
		s.Upsert(int64(i*10), int64(i*10+10))
	}
	s.RunDataNode(s.NewDataNode(), func() bool { return len(storedDeletes(t, s)) >= 20 })
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.Level == catalog.LevelL0 {
			require.Zero(t, seg.NumRows%10, "L0 segment %d holds whole upserts' deletes: %d", seg.ID, seg.NumRows)
		}
	}
	s.Flush()
	require.Len(t, storedDeletes(t, s), 40, "each upsert's deletes once")
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 40, s.Count())
}
