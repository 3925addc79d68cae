package querynode

import (
	"slices"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
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

// TestSelectSegmentsPrunesByClusteringKey: an L2 segment whose
// clustering-key range a filter excludes is not read; segments without a
// range (L1, growing, the null-key L2 segment) always are.
func TestSelectSegmentsPrunesByClusteringKey(t *testing.T) {
	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "year", DataType: schemapb.DataType_Int64, IsClusteringKey: true},
	}}
	seg := func(id int64, lo, hi any) *segment.Segment {
		s, err := segment.New(segment.Info{ID: id, ClusterField: 101, ClusterLo: lo, ClusterHi: hi}, schema)
		require.NoError(t, err)
		return s
	}
	d := &delegator{
		sealed: map[int64]*segment.Segment{
			1: seg(1, int64(1950), int64(1969)),
			2: seg(2, int64(1970), int64(1989)),
			3: seg(3, int64(1990), int64(2020)),
			4: seg(4, nil, nil), // rows with a null key, or an L1 segment
		},
		growing: map[int64]*segment.Segment{5: seg(5, nil, nil)},
		gen:     &readGen{},
	}
	sealed, growing, _, done, err := d.readSnapshot()
	require.NoError(t, err)
	defer done()
	v := &readView{c: &collection{info: &catalog.Collection{Schema: schema}}}
	for _, s := range sealed {
		v.segs, v.grow = append(v.segs, s), append(v.grow, false)
	}
	for _, s := range growing {
		v.segs, v.grow = append(v.segs, s), append(v.grow, true)
	}
	defer v.close()
	for filter, want := range map[string][]int64{
		"year == 1960":                 {1, 4, 5},
		"year >= 1975 and year < 1995": {2, 3, 4, 5},
		"year < 1900":                  {4, 5},
		"year in [1955, 2000]":         {1, 3, 4, 5},
		"id > 3":                       {1, 2, 3, 4, 5},
		"year == 1960 or id == 7":      {1, 2, 3, 4, 5},
	} {
		e, err := expr.Compile(filter, schema, nil)
		require.NoError(t, err)
		var got []int64
		for _, s := range v.selected(&plan.Read{Filter: filter}, e) {
			got = append(got, s.ID)
		}
		slices.Sort(got)
		require.Equal(t, want, got, filter)
	}
}

// TestDeleteBatchKeepsOneTimestamp: a batch whose keys share a timestamp
// keeps only that one, and replaying it (and a batch of mixed timestamps)
// into a segment deletes each key at its own timestamp.
func TestDeleteBatchKeepsOneTimestamp(t *testing.T) {
	ints := func(v ...int64) *column.Ints { return &column.Ints{T: schemapb.DataType_Int64, Data: v} }
	uniform := newDeleteBatch(ints(1, 3), []uint64{40, 40})
	require.Nil(t, uniform.tss, "one timestamp for the batch")
	require.Equal(t, uint64(40), uniform.maxTs)
	mixed := newDeleteBatch(ints(2, 4, 5), []uint64{30, 50, 20})
	require.Equal(t, []uint64{30, 50, 20}, mixed.tss)
	require.Equal(t, uint64(50), mixed.maxTs)

	schema := &schemapb.CollectionSchema{Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	}}
	seg, err := segment.New(segment.Info{ID: 1}, schema)
	require.NoError(t, err)
	defer func() { require.NoError(t, seg.Release()) }()
	require.NoError(t, seg.Append(map[int64]column.Column{100: ints(1, 2, 3, 4, 5, 6)}, []uint64{10, 10, 10, 10, 10, 10}))
	d := &delegator{deletes: []deleteBatch{mixed, uniform}}
	d.replayDeletes(seg)
	visible := func(ts uint64) (out []bool) {
		require.NoError(t, seg.Read(func(v *segment.View) error {
			out = v.Visible(ts)
			return nil
		}))
		return out
	}
	require.Equal(t, []bool{true, true, true, true, false, true}, visible(25), "key 5 deleted at 20")
	require.Equal(t, []bool{true, false, true, true, false, true}, visible(35), "key 2 deleted at 30")
	require.Equal(t, []bool{false, false, false, true, false, true}, visible(45), "keys 1 and 3 deleted at 40")
	require.Equal(t, []bool{false, false, false, false, false, true}, visible(55), "key 4 deleted at 50")
}
