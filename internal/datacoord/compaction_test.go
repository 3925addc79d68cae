package datacoord

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
)

// TestManualCompactionRewritesLargeSegmentsWithDeletes: a segment too large
// to be merged, whose deletes stay below DeletedRatio, is left alone by the
// automatic triggers, but a manual (forced) compaction rewrites it so that
// its deleted rows are gone; a large segment without deletes is left alone.
func TestManualCompactionRewritesLargeSegmentsWithDeletes(t *testing.T) {
	cfg := DefaultCompaction()
	const maxSize = 1000 // bytes; 10-byte rows: segments of ≥ 50 rows are not small
	rowSize := func(catalog.SegmentInfo) int64 { return 10 }
	seg := func(id, rows, deleted int64) catalog.SegmentInfo {
		s := catalog.SegmentInfo{ID: id, CollectionID: 1, PartitionID: 2, VChannel: "v", State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: rows}
		if deleted > 0 {
			s.Deltalogs = []catalog.Binlog{{LogID: 100 + id, Entries: deleted}}
		}
		return s
	}
	segs := []catalog.SegmentInfo{
		seg(1, 80, 5), // 6% deleted: below DeletedRatio
		seg(2, 80, 0), // no deletes
	}
	require.Empty(t, planCompactions(cfg, maxSize, segs, rowSize, nil, t0, false, 0, nil, noClustering), "automatic: nothing to do")
	plans := planCompactions(cfg, maxSize, segs, rowSize, nil, t0, true, 0, nil, noClustering)
	require.Len(t, plans, 1)
	require.Equal(t, catalog.CompactionMix, plans[0].Type)
	require.Len(t, plans[0].Inputs, 1)
	require.EqualValues(t, 1, plans[0].Inputs[0].ID)

	// Heavily deleted segments are rewritten either way.
	segs[1] = seg(2, 80, 40)
	require.Len(t, planCompactions(cfg, maxSize, segs, rowSize, nil, t0, false, 0, nil, noClustering), 1)
}

// noClustering is a clustering-key lookup for collections without one.
func noClustering(int64) int64 { return 0 }
