package fsck_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/fsck"
	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/wal"
)

// flippedRecord flips a bit in the data of the record at index i of the
// only WAL segment file of pchannel under dir.
func flippedRecord(t *testing.T, dir, pchannel string, i int) {
	t.Helper()
	path := filepath.Join(dir, fsck.WALDir, pchannel, "00000000000000000000.wal")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pos := 0
	for range i {
		pos += 8 + int(binary.LittleEndian.Uint32(b[pos:]))
	}
	b[pos+8+10] ^= 0x20
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// flushedKeys reads the primary keys of every flushed L1 segment's binlogs.
func flushedKeys(t *testing.T, s *stacktest.Stack) []int64 {
	t.Helper()
	var out []int64
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.Level == catalog.LevelL0 || seg.State != catalog.SegmentFlushed || seg.NumRows == 0 {
			continue
		}
		c, err := storage.ReadField(context.Background(), s.Objects, storage.FieldLogs{
			Root: "files", Collection: seg.CollectionID,
			Partition: seg.PartitionID, ID: seg.ID, LogIDs: seg.LogIDs(100),
		},
			&schemapb.FieldSchema{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64})
		require.NoError(t, err)
		out = append(out, c.(*column.Ints).Data...)
	}
	slices.Sort(out)
	return out
}

func keys(from, to int64) []int64 {
	var out []int64
	for k := from; k < to; k++ {
		out = append(out, k)
	}
	return out
}

// TestCutWALConsumers: the real data node and query node over a WAL cut
// before the channel checkpoint and padded by the repair: rows inserted
// after the repair are written to storage by the data node (it does not
// skip them as below its checkpoint, which is what happens to records
// that reuse the cut offsets) and served by the query node, next to
// every flushed row; the unflushed rows after the damage are the loss the
// repair reports. A segment sealed after the checkpoint, whose Flush
// message the cut removed, is flushed after the repair.
func TestCutWALConsumers(t *testing.T) {
	s := stacktest.New(t)
	for i := range int64(20) {
		s.Insert(5*i, 5*i+5) // one record each: offsets 1 … 20
	}
	s.Flush() // the checkpoint passes every row inserted so far
	sealed := s.Insert(100, 110)
	s.Seal() // its Flush message is after the checkpoint; no data node runs
	require.Equal(t, "Sealed", s.State(sealed))
	pch := wal.PChannelOf(s.VChannels[0])
	cp, ok := s.Data.Checkpoint(s.VChannels[0])
	require.True(t, ok)
	require.Greater(t, cp.Position.Offset, int64(20))

	var cut fsck.WALCut
	s.Reopen(func(dir string) {
		flippedRecord(t, dir, pch, 3) // the third insert, long before the checkpoint
		var err error
		cut, err = fsck.CutWAL(context.Background(), dir, pch, 0, nil)
		require.NoError(t, err)
	})
	require.Equal(t, int64(3), cut.Cut.End)
	require.Greater(t, cut.Pad.End, cp.Position.Offset, "padded past the checkpoint")
	require.Equal(t, []int64{sealed}, cut.Resealed[s.VChannels[0]])

	// New rows after the repair, then a flush: the data node must write them.
	s.Insert(1000, 1020)
	s.Flush()
	require.Equal(t, append(keys(0, 100), keys(1000, 1020)...), flushedKeys(t, s),
		"the flushed rows and every row inserted after the repair are in storage")
	require.Equal(t, "Flushed", s.State(sealed), "the segment whose Flush message was cut is flushed")

	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	s.Insert(2000, 2005) // served from the WAL (growing)
	got := s.Keys()
	slices.Sort(got)
	require.Equal(t, append(append(keys(0, 100), keys(1000, 1020)...), keys(2000, 2005)...), got,
		"the query node serves the flushed rows and the new ones; the unflushed rows after the damage are lost")
}
