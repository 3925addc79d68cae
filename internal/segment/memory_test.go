package segment_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/segment"
)

// churnSchema is the churn run's schema: an int64 key and a 32-d float
// vector, 136 bytes of raw data a row.
var churnSchema = &schemapb.CollectionSchema{Name: "churn", Fields: []*schemapb.FieldSchema{
	{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	{
		FieldID: 101, Name: "vec", DataType: schemapb.DataType_FloatVector,
		TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "32"}},
	},
}}

const churnRawRow = 8 + 4*32

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkSealedMemory loads sealed segments of the churn schema (keys of
// four interleaved writers, 30% of the rows deleted) and reports the Go heap
// they hold per row: heap-B/row, and overhead-B/row beyond the raw 136 bytes.
//
//	go test -run '^$' -bench SealedMemory -benchtime 1x ./internal/segment/
func BenchmarkSealedMemory(b *testing.B) {
	const segs, perSeg = 4, 250_000
	for range b.N {
		before := heapInUse()
		held := make([]*segment.Segment, 0, segs)
		for si := range segs {
			s, err := segment.New(segment.Info{ID: int64(si)}, churnSchema)
			require.NoError(b, err)
			pks := make([]int64, perSeg)
			for i := range pks {
				n := si*perSeg + i
				pks[i] = int64(n%4)<<40 + int64(n/4)
			}
			tss := make([]uint64, perSeg)
			for i := range tss {
				tss[i] = uint64(1000 + i/1000)
			}
			vecs := &column.FloatVectors{Dim: 32, Data: make([]float32, 32*perSeg)}
			require.NoError(b, s.Load(map[int64]column.Column{100: &column.Ints{T: schemapb.DataType_Int64, Data: pks}, 101: vecs}, tss))
			del := &column.Ints{T: schemapb.DataType_Int64}
			var dts []uint64
			for i := 0; i < perSeg; i += 10 {
				for j := range 3 {
					del.Data = append(del.Data, pks[i+j])
					dts = append(dts, 1<<40)
				}
			}
			require.Equal(b, len(dts), s.Delete(del, dts))
			held = append(held, s)
		}
		after := heapInUse()
		rows := float64(segs * perSeg)
		perRow := float64(after-before) / rows
		b.ReportMetric(perRow, "heap-B/row")
		b.ReportMetric(perRow-churnRawRow, "overhead-B/row")
		runtime.KeepAlive(held)
	}
}

// BenchmarkGrowingMemory appends rows of the churn schema to growing
// segments in batches of 1,000 (every fifth key appended again, as upserts
// do) and reports what they hold per row: heap-B/row (the Go heap after a
// forced GC), anon-B/row (resident anonymous memory, Go heap and offheap
// regions together, after the runtime returned what it could) and
// overhead-B/row (anon beyond the raw 136 bytes). heap keeps the rows on
// the Go heap (segment.New), offheap in regions (segment.NewGrowing, as
// the query node does).
//
//	go test -run '^$' -bench GrowingMemory -benchtime 1x ./internal/segment/
func BenchmarkGrowingMemory(b *testing.B) {
	const segs, perSeg, batch = 4, 250_000, 1000
	for _, c := range []struct {
		name    string
		reserve int
	}{{"heap", 0}, {"offheap", 1 << 30}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				heapBefore, anonBefore := heapInUse(), anonResident(b)
				held := make([]*segment.Segment, 0, segs)
				for si := range segs {
					s, err := segment.NewGrowing(segment.Info{ID: int64(si)}, churnSchema, c.reserve)
					require.NoError(b, err)
					for from := 0; from < perSeg; from += batch {
						pks := make([]int64, batch)
						for i := range pks {
							n := si*perSeg + from + i
							if i%5 == 4 {
								// An upsert of a key of the previous batch: one of a position
								// before, since a fifth position's own key is never appended.
								n -= batch + 1
							}
							pks[i] = int64(n%4)<<40 + int64(n/4)
						}
						tss := make([]uint64, batch)
						for i := range tss {
							tss[i] = uint64(1000 + from)
						}
						vecs := &column.FloatVectors{Dim: 32, Data: make([]float32, 32*batch)}
						for i := range vecs.Data {
							vecs.Data[i] = float32(i + 1) // non-zero: the pages are written, as real vectors write them
						}
						require.NoError(b, s.Append(map[int64]column.Column{100: &column.Ints{T: schemapb.DataType_Int64, Data: pks}, 101: vecs}, tss))
					}
					held = append(held, s)
				}
				heapAfter, anonAfter := heapInUse(), anonResident(b)
				rows := float64(segs * perSeg)
				b.ReportMetric(float64(heapAfter-heapBefore)/rows, "heap-B/row")
				anon := float64(int64(anonAfter)-int64(anonBefore)) / rows
				b.ReportMetric(anon, "anon-B/row")
				b.ReportMetric(anon-churnRawRow, "overhead-B/row")
				for _, s := range held {
					require.NoError(b, s.Release())
				}
			}
		})
	}
}

// anonResident returns the process's resident anonymous memory (RssAnon)
// after a forced GC and returning freed memory to the OS.
func anonResident(b *testing.B) uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(b, err)
			return kb << 10
		}
	}
	b.Fatal("no RssAnon in /proc/self/status")
	return 0
}

// BenchmarkDeleteLoaded applies delete batches of 300 keys (a third of them
// in the segment) to a loaded segment of 1M rows.
func BenchmarkDeleteLoaded(b *testing.B) {
	const n = 1_000_000
	s, err := segment.New(segment.Info{ID: 1}, churnSchema)
	require.NoError(b, err)
	pks := make([]int64, n)
	for i := range pks {
		pks[i] = int64(i%4)<<40 + int64(i/4)
	}
	tss := make([]uint64, n)
	for i := range tss {
		tss[i] = 10
	}
	require.NoError(b, s.Load(map[int64]column.Column{
		100: &column.Ints{T: schemapb.DataType_Int64, Data: pks},
		101: &column.FloatVectors{Dim: 32, Data: make([]float32, 32*n)},
	}, tss))
	batch := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, 300)}
	dts := make([]uint64, 300)
	b.ResetTimer()
	for i := range b.N {
		for j := range batch.Data {
			k := (i*300 + j) * 7919 % (3 * n)
			batch.Data[j] = int64(k%4)<<40 + int64(k/4)
			dts[j] = 20
		}
		s.Delete(batch, dts)
	}
}

// BenchmarkDeleteGrowing applies delete batches of 300 keys (a third of
// them in the segment) to a growing segment of 1M appended rows, a fifth of
// them keys appended again: the lookups go through the key index of
// appended rows.
func BenchmarkDeleteGrowing(b *testing.B) {
	const n, per = 1_000_000, 10_000
	s, err := segment.NewGrowing(segment.Info{ID: 1}, churnSchema, 0)
	require.NoError(b, err)
	for from := 0; from < n; from += per {
		pks := make([]int64, per)
		for i := range pks {
			k := from + i
			if i%5 == 4 {
				k -= per + 1 // an upsert of a key of the previous batch (see BenchmarkGrowingMemory)
			}
			pks[i] = int64(k%4)<<40 + int64(k/4)
		}
		tss := make([]uint64, per)
		for i := range tss {
			tss[i] = 10
		}
		require.NoError(b, s.Append(map[int64]column.Column{
			100: &column.Ints{T: schemapb.DataType_Int64, Data: pks},
			101: &column.FloatVectors{Dim: 32, Data: make([]float32, 32*per)},
		}, tss))
	}
	batch := &column.Ints{T: schemapb.DataType_Int64, Data: make([]int64, 300)}
	dts := make([]uint64, 300)
	b.ResetTimer()
	for i := range b.N {
		for j := range batch.Data {
			k := (i*300 + j) * 7919 % (3 * n)
			batch.Data[j] = int64(k%4)<<40 + int64(k/4)
			dts[j] = 20
		}
		s.Delete(batch, dts)
	}
	b.StopTimer()
	require.NoError(b, s.Release())
}
