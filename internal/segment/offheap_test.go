package segment

import (
	"sync"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/offheap"
)

// growingSchema has a column of every kind NewGrowing handles: fixed-width
// ones (kept in regions) and a variable-width one (kept on the heap).
var growingSchema = &schemapb.CollectionSchema{Name: "g", Fields: []*schemapb.FieldSchema{
	{FieldID: 100, Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	{FieldID: 101, Name: "f", DataType: schemapb.DataType_Double},
	{FieldID: 102, Name: "b", DataType: schemapb.DataType_Bool},
	{FieldID: 103, Name: "s", DataType: schemapb.DataType_VarChar},
	{FieldID: 104, Name: "v", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "4"}}},
	{FieldID: 105, Name: "bv", DataType: schemapb.DataType_BinaryVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "16"}}},
}}

// growingBatch builds rows from … from+n-1 of growingSchema; row i's
// values are all derived from i.
func growingBatch(from, n int) (map[int64]column.Column, []uint64) {
	pk := &column.Ints{T: schemapb.DataType_Int64}
	f := &column.Floats{T: schemapb.DataType_Double}
	b := &column.Bools{}
	s := &column.Strings{T: schemapb.DataType_VarChar}
	v := &column.FloatVectors{Dim: 4}
	bv := &column.ByteVectors{T: schemapb.DataType_BinaryVector, Dim: 16, Width: 2}
	tss := make([]uint64, n)
	for i := from; i < from+n; i++ {
		pk.Data = append(pk.Data, int64(i))
		f.Data = append(f.Data, float64(i)/2)
		b.Data = append(b.Data, i%3 == 0)
		s.Data = append(s.Data, string(rune('a'+i%26)))
		v.Data = append(v.Data, float32(i), float32(i+1), float32(i+2), float32(i+3))
		bv.Data = append(bv.Data, byte(i), byte(i>>8))
		tss[i-from] = uint64(10 + i/7)
	}
	return map[int64]column.Column{100: pk, 101: f, 102: b, 103: s, 104: v, 105: bv}, tss
}

// checkRows checks that the view's n rows are rows 0 … n-1 of growingBatch.
func checkRows(t *testing.T, v *View) {
	t.Helper()
	pk := v.Column(100).(*column.Ints)
	f := v.Column(101).(*column.Floats)
	b := v.Column(102).(*column.Bools)
	s := v.Column(103).(*column.Strings)
	vec := v.Column(104).(*column.FloatVectors)
	bv := v.Column(105).(*column.ByteVectors)
	for i := range v.Len() {
		require.Equal(t, int64(i), pk.Data[i])
		require.Equal(t, float64(i)/2, f.Data[i])
		require.Equal(t, i%3 == 0, b.Data[i])
		require.Equal(t, string(rune('a'+i%26)), s.Data[i])
		require.Equal(t, []float32{float32(i), float32(i + 1), float32(i + 2), float32(i + 3)}, vec.Row(i))
		require.Equal(t, []byte{byte(i), byte(i >> 8)}, bv.Row(i))
		require.Equal(t, uint64(10+i/7), v.Timestamp(i))
	}
}

// inRegion reports whether a slice's array lies in one of the segment's
// regions.
func inRegion[T any](s *Segment, data []T) bool {
	for _, r := range s.regions {
		if offheap.Holds(r, data) {
			return true
		}
	}
	return false
}

// TestNewGrowing: the fixed-width columns and the timestamps of a growing
// segment fill their regions in place over many appends (across page
// boundaries), the others stay on the heap, and every row reads back.
func TestNewGrowing(t *testing.T) {
	s, err := NewGrowing(Info{ID: 1}, growingSchema, 1<<20)
	require.NoError(t, err)
	require.Len(t, s.regions, 1) // one mapping: pk, f, b, v, bv, tss, delTs side by side
	for from := 0; from < 5000; from += 333 {
		cols, tss := growingBatch(from, 333)
		require.NoError(t, s.Append(cols, tss))
	}
	require.NoError(t, s.Read(func(v *View) error {
		require.Equal(t, 5328, v.Len())
		checkRows(t, v)
		require.True(t, inRegion(s, v.Column(100).(*column.Ints).Data))
		require.True(t, inRegion(s, v.Column(101).(*column.Floats).Data))
		require.True(t, inRegion(s, v.Column(102).(*column.Bools).Data))
		require.True(t, inRegion(s, v.Column(104).(*column.FloatVectors).Data))
		require.True(t, inRegion(s, v.Column(105).(*column.ByteVectors).Data))
		require.True(t, inRegion(s, s.tss))
		require.True(t, inRegion(s, s.delTs))
		require.False(t, inRegion(s, v.Column(103).(*column.Strings).Data))
		return nil
	}))

	// Deletes, then more rows: the new rows carry no delete mark.
	require.Equal(t, 2, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{3, 4000}}, []uint64{1 << 20, 1 << 20}))
	cols, tss := growingBatch(5328, 700)
	require.NoError(t, s.Append(cols, tss))
	require.NoError(t, s.Read(func(v *View) error {
		checkRows(t, v)
		mask, count := v.VisibleAt(1<<21, 0)
		require.Equal(t, 6028-2, count)
		require.False(t, mask[3])
		require.False(t, mask[4000])
		for i := 5328; i < 6028; i++ {
			require.True(t, mask[i])
		}
		return nil
	}))

	require.NoError(t, s.Release())
	require.Nil(t, s.regions, "freed: the regions are unmapped")
	cols, tss = growingBatch(6028, 1)
	require.ErrorIs(t, s.Append(cols, tss), ErrFreed)
}

// TestNewGrowingOutgrows: a column that outgrows its region moves to the
// heap (append's copy) with every row intact; the region stays mapped
// until the segment is freed.
func TestNewGrowingOutgrows(t *testing.T) {
	s, err := NewGrowing(Info{ID: 1}, growingSchema, 4096) // 80 rows, rounded up to a page a slot: 256 vectors, 2048 binary ones
	require.NoError(t, err)
	for from := 0; from < 1000; from += 100 {
		cols, tss := growingBatch(from, 100)
		require.NoError(t, s.Append(cols, tss))
	}
	require.NoError(t, s.Read(func(v *View) error {
		checkRows(t, v)
		require.False(t, inRegion(s, v.Column(104).(*column.FloatVectors).Data), "moved to the heap")
		require.True(t, inRegion(s, v.Column(105).(*column.ByteVectors).Data), "2 bytes a row: still in its region")
		return nil
	}))
	require.Len(t, s.regions, 1)
	require.NoError(t, s.Release())
}

// TestNewGrowingHeap: reserve 0 keeps every column on the heap.
func TestNewGrowingHeap(t *testing.T) {
	s, err := NewGrowing(Info{ID: 1}, growingSchema, 0)
	require.NoError(t, err)
	require.Empty(t, s.regions)
	cols, tss := growingBatch(0, 50)
	require.NoError(t, s.Append(cols, tss))
	require.NoError(t, s.Read(func(v *View) error { checkRows(t, v); return nil }))
	require.NoError(t, s.Release())
}

// TestNewGrowingConcurrentReads: readers holding the segment read
// consistent rows while a writer appends (run with -race), and the regions
// are unmapped only after the last reader released it.
func TestNewGrowingConcurrentReads(t *testing.T) {
	s, err := NewGrowing(Info{ID: 1}, growingSchema, 1<<20)
	require.NoError(t, err)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		require.True(t, s.Acquire())
		wg.Go(func() {
			defer func() { require.NoError(t, s.Release()) }()
			for {
				select {
				case <-done:
					return
				default:
				}
				require.NoError(t, s.Read(func(v *View) error { checkRows(t, v); return nil }))
			}
		})
	}
	for from := 0; from < 4000; from += 100 {
		cols, tss := growingBatch(from, 100)
		require.NoError(t, s.Append(cols, tss))
	}
	require.NoError(t, s.Release()) // the owner goes first: the readers still hold it
	require.NotNil(t, s.regions)
	close(done)
	wg.Wait()
	require.Nil(t, s.regions)
}

// TestMoveOffHeap: a loaded segment's fixed-width columns (but not those
// kept, nor variable-width ones), timestamps, key permutation and delete
// marks move to regions of their exact size; every row, key lookup and
// delete mark reads as before, and the regions go when it is freed.
func TestMoveOffHeap(t *testing.T) {
	s, err := New(Info{ID: 1}, growingSchema)
	require.NoError(t, err)
	cols, tss := growingBatch(0, 3000)
	require.NoError(t, s.Load(cols, tss))
	require.Equal(t, 1, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{17}}, []uint64{1 << 20}))

	require.NoError(t, s.MoveOffHeap(map[int64]bool{105: true}))
	require.Len(t, s.regions, 1, "one mapping for all that moved")
	require.NoError(t, s.Read(func(v *View) error {
		checkRows(t, v)
		require.True(t, inRegion(s, v.Column(100).(*column.Ints).Data))
		require.True(t, inRegion(s, v.Column(104).(*column.FloatVectors).Data))
		require.False(t, inRegion(s, v.Column(105).(*column.ByteVectors).Data), "kept")
		require.False(t, inRegion(s, v.Column(103).(*column.Strings).Data))
		require.True(t, inRegion(s, s.tss))
		require.True(t, inRegion(s, s.sorted))
		require.True(t, inRegion(s, s.delTs))
		mask, count := v.VisibleAt(1<<21, 0)
		require.Equal(t, 2999, count)
		require.False(t, mask[17])
		return nil
	}))
	// Key lookups (the permutation) and new delete marks work on the moved rows.
	require.Equal(t, 2, s.Delete(&column.Ints{T: schemapb.DataType_Int64, Data: []int64{2999, 0, 17}}, []uint64{1 << 20, 1 << 20, 1 << 21}))
	require.NoError(t, s.Read(func(v *View) error {
		_, count := v.VisibleAt(1<<22, 0)
		require.Equal(t, 2997, count)
		return nil
	}))
	require.NoError(t, s.Release())
	require.Nil(t, s.regions)
	require.ErrorIs(t, s.MoveOffHeap(nil), ErrFreed)
}

// TestShareColumnDiscards: a vector column in a region the segment owns
// (OwnRegion) gives its pages back when ShareColumn replaces it; the
// region stays mapped until the segment is freed.
func TestShareColumnDiscards(t *testing.T) {
	s, err := New(Info{ID: 1}, growingSchema)
	require.NoError(t, err)
	cols, tss := growingBatch(0, 1000)
	r, err := offheap.Reserve(1000 * 4 * 4)
	require.NoError(t, err)
	require.NoError(t, s.OwnRegion(r))
	in, err := offheap.Slice[float32](r)
	require.NoError(t, err)
	vec := cols[104].(*column.FloatVectors)
	vec.Data = append(in, vec.Data...)
	require.NoError(t, s.Load(cols, tss))
	old := vec.Data

	shared := &column.FloatVectors{Dim: 4, Data: append([]float32(nil), old...)}
	require.NoError(t, s.ShareColumn(104, shared))
	require.NoError(t, s.Read(func(v *View) error { checkRows(t, v); return nil }))
	require.Zero(t, old[4*999+3], "the replaced column's pages were given back")
	require.True(t, offheap.Holds(r, old), "still mapped")

	require.NoError(t, s.Release())
	require.False(t, offheap.Holds(r, old), "unmapped once freed")
	r2, err := offheap.Reserve(4096)
	require.NoError(t, err)
	require.ErrorIs(t, s.OwnRegion(r2), ErrFreed)
	require.NoError(t, r2.Close())
}
