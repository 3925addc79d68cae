package storage

// Decodes binlogs written by a real Milvus 2.3.5 (testdata/milvus-2.3.5,
// produced by tools/milvusfixtures/make_fixtures.py; see the README there)
// and checks every row against the rules of tools/milvusfixtures/rows.py.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bloom/v3"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
)

// milvusFixtureRoot is the fixture directory under testdata; it plays the
// role of Milvus' localStorage.path (the root of every object key).
const milvusFixtureRoot = "milvus-2.3.5"

// Known rows of tools/milvusfixtures/rows.py.
const (
	fixtureRows   = 300
	fixturePKBase = 1000
	fixtureVRows  = 40
)

func fixtureDeleted(i int) bool  { return i < 10 || i%50 == 25 }
func fixtureVDeleted(i int) bool { return i%4 == 1 }

// alltSchema is collection "allt" as Milvus 2.3.5 numbered it (fields 100+
// in schema order, then the dynamic $meta field).
var alltSchema = []*schemapb.FieldSchema{
	{FieldID: 100, Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	{FieldID: 101, Name: "b", DataType: schemapb.DataType_Bool},
	{FieldID: 102, Name: "i8", DataType: schemapb.DataType_Int8},
	{FieldID: 103, Name: "i16", DataType: schemapb.DataType_Int16},
	{FieldID: 104, Name: "i32", DataType: schemapb.DataType_Int32},
	{FieldID: 105, Name: "f", DataType: schemapb.DataType_Float},
	{FieldID: 106, Name: "d", DataType: schemapb.DataType_Double},
	{FieldID: 107, Name: "s", DataType: schemapb.DataType_VarChar},
	{FieldID: 108, Name: "j", DataType: schemapb.DataType_JSON},
	{FieldID: 109, Name: "ai", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_Int64},
	{FieldID: 110, Name: "as", DataType: schemapb.DataType_Array, ElementType: schemapb.DataType_VarChar},
	{FieldID: 111, Name: "fv", DataType: schemapb.DataType_FloatVector},
	{FieldID: 112, Name: "$meta", DataType: schemapb.DataType_JSON, IsDynamic: true},
	{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
	{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
}

// vpkSchema is collection "vpk": VarChar primary key and a binary vector.
var vpkSchema = []*schemapb.FieldSchema{
	{FieldID: 100, Name: "k", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true},
	{FieldID: 101, Name: "bv", DataType: schemapb.DataType_BinaryVector},
	{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
	{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
}

type fixtureManifest struct {
	Milvus      string `json:"milvus"`
	Collections map[string]struct {
		ID       int64 `json:"id"`
		Count    int   `json:"count"`
		Files    int   `json:"files"`
		Segments []struct {
			Segment   int64 `json:"segment"`
			Partition int64 `json:"partition"`
			Rows      int   `json:"rows"`
		} `json:"loaded_segments"`
	} `json:"collections"`
}

// isFixtureDoc reports whether a fixture file is documentation
// (manifest.json, README.md), not a Milvus object.
func isFixtureDoc(name string) bool { return name == "manifest.json" || name == "README.md" }

// fixtureSegment is one segment's object keys, parsed with ParseObjectKey.
type fixtureSegment struct {
	coll, part, seg int64
	insert          map[int64][]ObjectKey // by field ID
	stats           []ObjectKey
	delta           []ObjectKey
}

// dirGetter reads object keys as files under a directory.
type dirGetter string

func (d dirGetter) Get(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(d), filepath.FromSlash(key)))
}

func loadMilvusFixture(t *testing.T) (fixtureManifest, map[int64]*fixtureSegment) {
	t.Helper()
	var m fixtureManifest
	raw, err := os.ReadFile(filepath.Join("testdata", milvusFixtureRoot, "manifest.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &m))
	require.Equal(t, "v2.3.5-lite", m.Milvus)

	segs := map[int64]*fixtureSegment{}
	files := map[int64]int{} // per collection
	err = filepath.WalkDir(filepath.Join("testdata", milvusFixtureRoot), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || isFixtureDoc(d.Name()) {
			return err
		}
		rel, err := filepath.Rel("testdata", p)
		if err != nil {
			return err
		}
		k, err := ParseObjectKey(milvusFixtureRoot, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		s := segs[k.SegmentID]
		if s == nil {
			s = &fixtureSegment{coll: k.CollectionID, part: k.PartitionID, seg: k.SegmentID, insert: map[int64][]ObjectKey{}}
			segs[k.SegmentID] = s
		}
		require.Equal(t, s.coll, k.CollectionID, rel)
		require.Equal(t, s.part, k.PartitionID, rel)
		files[k.CollectionID]++
		switch k.Kind {
		case KindInsertLog:
			s.insert[k.FieldID] = append(s.insert[k.FieldID], k)
		case KindStatsLog:
			s.stats = append(s.stats, k)
		case KindDeltaLog:
			s.delta = append(s.delta, k)
		default:
			return fmt.Errorf("unexpected key kind %s: %s", k.Kind, rel)
		}
		return nil
	})
	require.NoError(t, err)
	for name, c := range m.Collections {
		require.Equal(t, c.Files, files[c.ID], "files of %s", name)
	}
	return m, segs
}

// readFixtureSegment decodes every field of a segment through ReadField (the
// loader's path) and checks each file's descriptor against its key.
func readFixtureSegment(t *testing.T, s *fixtureSegment, schema []*schemapb.FieldSchema) map[int64]column.Column {
	t.Helper()
	get := dirGetter("testdata")
	cols := map[int64]column.Column{}
	rows := -1
	for _, f := range schema {
		keys := s.insert[f.FieldID]
		require.NotEmpty(t, keys, "segment %d has no insert log for field %d", s.seg, f.FieldID)
		var ids []int64
		for _, k := range keys {
			ids = append(ids, k.LogID)
			data, err := get.Get(context.Background(), k.Key(milvusFixtureRoot))
			require.NoError(t, err)
			b, err := DecodeBinlog(data, WithElementType(f.GetElementType()))
			require.NoError(t, err)
			d := b.Descriptor
			require.Equal(t, []int64{s.coll, s.part, s.seg, f.FieldID}, []int64{d.CollectionID, d.PartitionID, d.SegmentID, d.FieldID})
			require.Equal(t, f.DataType, d.PayloadType, "field %d", f.FieldID)
			require.Equal(t, InsertEventType, b.EventType())
			// 2.3.5 writes the classic form: column "val", no "nullable" extra.
			require.Equal(t, []string{"val"}, b.ColumnNames)
			require.NotEmpty(t, extraString(d.Extras, ExtraOriginalSize))
			require.NotContains(t, d.Extras, ExtraNullable)
			require.NotZero(t, d.StartTimestamp)
			require.LessOrEqual(t, d.StartTimestamp, d.EndTimestamp)
		}
		col, err := ReadField(context.Background(), get, FieldLogs{Root: milvusFixtureRoot, Collection: s.coll, Partition: s.part, ID: s.seg, LogIDs: ids}, f)
		require.NoError(t, err)
		if rows < 0 {
			rows = col.Len()
		}
		require.Equal(t, rows, col.Len(), "field %d row count", f.FieldID)
		cols[f.FieldID] = col
	}
	return cols
}

// checkSystemFields checks RowID (unique) and Timestamp (within the
// descriptor's range) of a segment.
func checkSystemFields(t *testing.T, cols map[int64]column.Column, rowIDs map[int64]bool) []uint64 {
	t.Helper()
	ids := cols[0].(*column.Ints)
	for _, id := range ids.Data {
		require.False(t, rowIDs[id], "row ID %d repeated", id)
		require.Positive(t, id)
		rowIDs[id] = true
	}
	var tss []uint64
	for _, ts := range cols[1].(*column.Ints).Data {
		require.Positive(t, ts)
		tss = append(tss, uint64(ts))
	}
	return tss
}

// checkDeltas decodes a segment's delta logs; every delete must name a key of
// the segment, inserted before it, and the set must be wantDeleted.
func checkDeltas(t *testing.T, s *fixtureSegment, pkType schemapb.DataType, insertTS map[any]uint64, wantDeleted []any) {
	t.Helper()
	var got []any
	for _, k := range s.delta {
		data, err := os.ReadFile(filepath.Join("testdata", k.Key(milvusFixtureRoot)))
		require.NoError(t, err)
		b, err := DecodeBinlog(data)
		require.NoError(t, err)
		require.Equal(t, DeleteEventType, b.EventType())
		require.Equal(t, []int64{s.coll, s.part, s.seg, -1}, []int64{b.Descriptor.CollectionID, b.Descriptor.PartitionID, b.Descriptor.SegmentID, b.Descriptor.FieldID})
		require.Equal(t, schemapb.DataType_String, b.Descriptor.PayloadType)
		pks, tss, err := DecodeDeltaLog(data)
		require.NoError(t, err)
		require.Equal(t, pkType, pks.Type())
		for i, ts := range tss {
			var pk any
			switch c := pks.(type) {
			case *column.Ints:
				pk = c.Data[i]
			case *column.Strings:
				pk = c.Data[i]
			}
			its, ok := insertTS[pk]
			require.True(t, ok, "deleted key %v is not in segment %d", pk, s.seg)
			require.Greater(t, ts, its, "delete of %v not after its insert", pk)
			got = append(got, pk)
		}
	}
	require.ElementsMatch(t, wantDeleted, got, "deletes of segment %d", s.seg)
}

// checkStats decodes a segment's stats logs: min/max bound the keys, and the
// bloom filter (built by Milvus, probed with Strata's hashing) holds every key.
func checkStats(t *testing.T, s *fixtureSegment, pkType schemapb.DataType, keys []any, absent func(int) any) {
	t.Helper()
	require.NotEmpty(t, s.stats, "segment %d has no stats log", s.seg)
	compound := 0
	for _, k := range s.stats {
		data, err := os.ReadFile(filepath.Join("testdata", k.Key(milvusFixtureRoot)))
		require.NoError(t, err)
		require.EqualValues(t, 100, k.FieldID)
		stats, err := UnmarshalStats(data)
		require.NoError(t, err)
		require.NotEmpty(t, stats)
		if k.LogID == CompoundStatsLogID {
			compound++
			require.Equal(t, byte('['), data[0])
		}
		for _, st := range stats {
			require.EqualValues(t, 100, st.FieldID)
			require.Equal(t, pkType, st.PKType)
			require.Equal(t, BasicBF, st.BFType)
			require.NotNil(t, st.BF)
			require.True(t, st.HasKeys)
			require.Equal(t, slices.MinFunc(keys, cmpKey), st.Min())
			require.Equal(t, slices.MaxFunc(keys, cmpKey), st.Max())
			for _, pk := range keys {
				require.True(t, st.MayContain(pk), "bloom filter of segment %d misses %v", s.seg, pk)
			}
			// The same keys added with Strata's hashing into a filter of
			// Milvus' size give Milvus' bits exactly, so Milvus reads
			// Strata's filters with the same answers.
			mine := &PKStats{FieldID: 100, PKType: pkType, BF: bloom.New(st.BF.Cap(), st.BF.K())}
			for _, pk := range keys {
				require.NoError(t, mine.Add(pk))
			}
			require.True(t, mine.BF.Equal(st.BF), "bloom filter of segment %d (m=%d k=%d) differs from Strata's for the same keys", s.seg, st.BF.Cap(), st.BF.K())
			fp := 0
			for i := 0; i < 1000; i++ {
				if st.MayContain(absent(i)) {
					fp++
				}
			}
			require.Less(t, fp, 200, "bloom filter of segment %d accepts %d of 1000 absent keys", s.seg, fp)
		}
	}
	require.Equal(t, 1, compound, "segment %d compound stats logs", s.seg)
}

func cmpKey(a, b any) int {
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case string:
		return cmp.Compare(a, b.(string))
	}
	panic(fmt.Sprintf("key type %T", a))
}

// checkAlltRow compares row r of a segment of "allt" with rows.py's row i.
func checkAlltRow(t *testing.T, cols map[int64]column.Column, r, i int) {
	t.Helper()
	at := fmt.Sprintf("row %d (i=%d)", r, i)
	require.Equal(t, i%3 == 0, cols[101].(*column.Bools).Data[r], at)
	require.Equal(t, int64(i%256-128), cols[102].(*column.Ints).Data[r], at)
	require.Equal(t, int64(i*100-15000), cols[103].(*column.Ints).Data[r], at)
	require.Equal(t, int64(i*i-7), cols[104].(*column.Ints).Data[r], at)
	require.Equal(t, float64(float32(float64(i)*0.5)), cols[105].(*column.Floats).Data[r], at)
	require.Equal(t, float64(i)/7.0, cols[106].(*column.Floats).Data[r], at)
	s := fmt.Sprintf("s%04d", i)
	if i%10 == 0 {
		s = "é" + s
	}
	require.Equal(t, s, cols[107].(*column.Strings).Data[r], at)
	require.JSONEq(t, fmt.Sprintf(`{"i":%d,"tag":"t%d","even":%t}`, i, i%5, i%2 == 0), string(cols[108].(*column.JSONs).Data[r]), at)

	var ai []int64
	for k := 0; k <= i%4; k++ {
		ai = append(ai, int64(i+k))
	}
	require.Equal(t, ai, cols[109].(*column.Arrays).Data[r].GetLongData().GetData(), at)
	as := []string{fmt.Sprintf("a%d", i), "b"}[:i%3]
	require.Len(t, cols[110].(*column.Arrays).Data[r].GetStringData().GetData(), len(as), at)
	if len(as) > 0 {
		require.Equal(t, as, cols[110].(*column.Arrays).Data[r].GetStringData().GetData(), at)
	}
	fv := cols[111].(*column.FloatVectors)
	require.Equal(t, 8, fv.Dim)
	want := make([]float32, 8)
	for k := range want {
		want[k] = float32(float64(i) + float64(k)*0.25)
	}
	require.Equal(t, want, fv.Row(r), at)
	meta := "{}"
	if i%2 == 0 {
		meta = fmt.Sprintf(`{"dyn":%d}`, i*3)
	}
	require.JSONEq(t, meta, string(cols[112].(*column.JSONs).Data[r]), at)
}

func TestMilvus235FixtureAllTypes(t *testing.T) {
	m, segs := loadMilvusFixture(t)
	coll := m.Collections["allt"]
	require.Len(t, coll.Segments, 2)
	seen := map[int]bool{}
	rowIDs := map[int64]bool{}
	live := 0
	for _, ms := range coll.Segments {
		s := segs[ms.Segment]
		require.NotNil(t, s, "segment %d", ms.Segment)
		require.Equal(t, []int64{coll.ID, ms.Partition}, []int64{s.coll, s.part})
		cols := readFixtureSegment(t, s, alltSchema)
		require.Equal(t, ms.Rows, cols[100].Len())
		tss := checkSystemFields(t, cols, rowIDs)
		insertTS := map[any]uint64{}
		var keys, deleted []any
		for r, pk := range cols[100].(*column.Ints).Data {
			i := int(pk - fixturePKBase)
			require.True(t, i >= 0 && i < fixtureRows && !seen[i], "pk %d", pk)
			seen[i] = true
			checkAlltRow(t, cols, r, i)
			insertTS[pk] = tss[r]
			keys = append(keys, pk)
			if fixtureDeleted(i) {
				deleted = append(deleted, pk)
			} else {
				live++
			}
		}
		checkDeltas(t, s, schemapb.DataType_Int64, insertTS, deleted)
		checkStats(t, s, schemapb.DataType_Int64, keys, func(k int) any { return int64(fixturePKBase + fixtureRows + 1 + k*7) })
	}
	require.Len(t, seen, fixtureRows)
	require.Equal(t, coll.Count, live)
}

func TestMilvus235FixtureVarCharPK(t *testing.T) {
	m, segs := loadMilvusFixture(t)
	coll := m.Collections["vpk"]
	require.Len(t, coll.Segments, 2)
	seen := map[int]bool{}
	rowIDs := map[int64]bool{}
	live := 0
	for n, ms := range coll.Segments {
		s := segs[ms.Segment]
		require.NotNil(t, s, "segment %d", ms.Segment)
		cols := readFixtureSegment(t, s, vpkSchema)
		tss := checkSystemFields(t, cols, rowIDs)
		bv := cols[101].(*column.ByteVectors)
		require.Equal(t, 16, bv.Dim)
		require.Equal(t, 2, bv.Width)
		insertTS := map[any]uint64{}
		var keys, deleted []any
		for r, k := range cols[100].(*column.Strings).Data {
			var i int
			_, err := fmt.Sscanf(k, "k%03d", &i)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("k%03d", i), k)
			require.True(t, i < fixtureVRows && !seen[i], "key %s", k)
			seen[i] = true
			require.Equal(t, []byte{byte(i % 256), byte(i * 7 % 256)}, bv.Row(r), "row %d", r)
			insertTS[k] = tss[r]
			keys = append(keys, k)
			if fixtureVDeleted(i) {
				deleted = append(deleted, k)
			} else {
				live++
			}
		}
		checkDeltas(t, s, schemapb.DataType_VarChar, insertTS, deleted)
		if n == 0 { // the fixture keeps only the first segment's stats log
			checkStats(t, s, schemapb.DataType_VarChar, keys, func(k int) any { return fmt.Sprintf("absent-%d", k) })
		} else {
			require.Empty(t, s.stats)
		}
	}
	require.Len(t, seen, fixtureVRows)
	require.Equal(t, coll.Count, live)
}

// TestMilvus235FixtureDump runs Dump (`strata binlog dump`) over every
// fixture file: each must decode without error.
func TestMilvus235FixtureDump(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join("testdata", milvusFixtureRoot), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || isFixtureDoc(path.Base(p)) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		var out discardCounter
		if err := Dump(&out, data, -1); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if out == 0 {
			return fmt.Errorf("%s: empty dump", p)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 47, n)
}

type discardCounter int

func (c *discardCounter) Write(p []byte) (int, error) {
	*c += discardCounter(len(p))
	return len(p), nil
}
