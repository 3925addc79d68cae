package querynode

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
)

func TestDeleteWatermark(t *testing.T) {
	l0 := func(from ...uint64) catalog.SegmentInfo {
		s := catalog.SegmentInfo{Level: catalog.LevelL0, State: catalog.SegmentFlushed}
		for _, f := range from {
			s.Deltalogs = append(s.Deltalogs, catalog.Binlog{TsFrom: f, TsTo: f + 5})
		}
		return s
	}
	rec := func(cp uint64, segs ...catalog.SegmentInfo) catalog.RecoveryInfo {
		return catalog.RecoveryInfo{Checkpoint: catalog.ChannelCheckpoint{Position: catalog.Position{TimeTick: cp}}, Segments: segs}
	}
	l1 := catalog.SegmentInfo{Level: catalog.LevelL1, State: catalog.SegmentFlushed}
	for _, tc := range []struct {
		name  string
		rec   catalog.RecoveryInfo
		since map[int64]uint64
		want  uint64
	}{
		{"nothing pending: the checkpoint", rec(100, l1), nil, 100},
		{"no checkpoint yet", rec(0), nil, 0},
		{"a live L0 segment", rec(100, l1, l0(40, 70)), nil, 40},
		{"a growing copy", rec(100, l0(90)), map[int64]uint64{7: 60, 8: 80}, 60},
		{"an L0 log without a time range", rec(100, l0(0)), nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, deleteWatermark(tc.rec, tc.since))
		})
	}
}

func TestPruneDeletes(t *testing.T) {
	batch := func(tss ...uint64) deleteBatch {
		pks := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, len(tss))}
		return newDeleteBatch(pks, tss)
	}
	d := &delegator{deletes: []deleteBatch{batch(10, 20), batch(30), batch(25, 50), batch(60)}}
	d.pruneDeletes(30)
	var kept []uint64
	for _, b := range d.deletes {
		kept = append(kept, b.maxTs)
	}
	require.Equal(t, []uint64{30, 50, 60}, kept, "batches entirely below the watermark go; the rest keep their order")
	d.pruneDeletes(0)
	require.Len(t, d.deletes, 3)
}
