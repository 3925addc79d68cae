package importer

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// memFiles is an in-memory object store for backup sources.
type memFiles map[string][]byte

func (m memFiles) ReadFile(_ context.Context, p string) ([]byte, error) {
	b, ok := m[p]
	if !ok {
		return nil, errors.New("the file " + p + " does not exist")
	}
	return b, nil
}

func (m memFiles) ListFiles(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func backupSchema() *schemapb.CollectionSchema {
	return &schemapb.CollectionSchema{Name: "b", Fields: []*schemapb.FieldSchema{
		{FieldID: 0, Name: "RowID", DataType: schemapb.DataType_Int64},
		{FieldID: 1, Name: "Timestamp", DataType: schemapb.DataType_Int64},
		{
			FieldID: 100, Name: "pk", DataType: schemapb.DataType_VarChar, IsPrimaryKey: true,
			TypeParams: []*commonpb.KeyValuePair{{Key: "max_length", Value: "8"}},
		},
		{
			FieldID: 101, Name: "v", DataType: schemapb.DataType_FloatVector,
			TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}},
		},
		// Added to the schema after the segment's first sync.
		{FieldID: 102, Name: "n", DataType: schemapb.DataType_Int64, Nullable: true},
	}}
}

// writeSync writes one sync's binlogs of segment 3 (collection 1,
// partition 2) under root: keys pks at timestamps tss.
func writeSync(t *testing.T, files memFiles, schema *schemapb.CollectionSchema, logID int64, pks []string, tss []int64, withN bool) {
	t.Helper()
	n := len(pks)
	rowIDs := make([]int64, n)
	vecs := make([]float32, 0, 2*n)
	ns := make([]int64, n)
	for i := range pks {
		rowIDs[i] = logID*100 + int64(i)
		vecs = append(vecs, float32(i), float32(logID))
		ns[i] = int64(i)
	}
	cols := map[int64]column.Column{
		0:   &column.Ints{T: schemapb.DataType_Int64, Data: rowIDs},
		1:   &column.Ints{T: schemapb.DataType_Int64, Data: tss},
		100: &column.Strings{T: schemapb.DataType_VarChar, Data: pks},
		101: &column.FloatVectors{Dim: 2, Data: vecs},
		102: &column.Ints{T: schemapb.DataType_Int64, Data: ns},
	}
	for _, f := range schema.GetFields() {
		if f.GetFieldID() == 102 && !withN {
			continue
		}
		d := storage.Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 3, StartTimestamp: 1, EndTimestamp: 1 << 40}
		b, err := storage.EncodeInsertLog(d, f, cols[f.GetFieldID()])
		require.NoError(t, err)
		files[storage.InsertLogKey("bk", 1, 2, 3, f.GetFieldID(), logID)] = b
	}
}

// TestBackupSegment: a backup segment's rows are read sync by sync; rows
// after end_ts and rows a later delete (in range) removes are left out; an
// upsert's row (delete at the row's own timestamp) survives; a field added
// after the first sync reads as nulls there.
func TestBackupSegment(t *testing.T) {
	ctx := context.Background()
	schema := backupSchema()
	files := memFiles{}
	writeSync(t, files, schema, 10, []string{"a", "b", "c"}, []int64{100, 100, 100}, false)
	writeSync(t, files, schema, 11, []string{"d", "e", "f"}, []int64{200, 200, 300}, true)
	// b deleted at 150 (after its insert): gone. d deleted at 200 (its own
	// timestamp, an upsert): kept. c deleted at 400 > end: kept. a deleted
	// at 50, before its insert: kept.
	del, err := storage.EncodeDeltaLog(storage.Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: 9},
		schemapb.DataType_VarChar, &column.Strings{T: schemapb.DataType_VarChar, Data: []string{"b", "d", "c", "a"}},
		[]uint64{150, 200, 400, 50})
	require.NoError(t, err)
	files[storage.DeltaLogKey("bk", 1, -1, 9, 1)] = del

	insPrefix := "bk/insert_log/1/2/3"
	seg, err := openBackupSegment(ctx, schema, []string{insPrefix, "bk/delta_log/1/2/3", "bk/delta_log/1/-1/9"}, files, files, 0, 250)
	require.NoError(t, err)
	require.Equal(t, 2, seg.nfiles)

	cols, n, read, err := seg.read(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 3, read)
	require.Equal(t, 2, n)
	require.Equal(t, []string{"a", "c"}, cols[100].(*column.Strings).Data)
	require.Equal(t, []float32{0, 10, 2, 10}, cols[101].(*column.FloatVectors).Data)
	require.Equal(t, 2, cols[102].Len())
	require.Equal(t, []bool{false, false}, cols[102].(*column.Ints).Valid)

	cols, n, read, err = seg.read(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, 3, read)
	require.Equal(t, 2, n, "f is past end_ts")
	require.Equal(t, []string{"d", "e"}, cols[100].(*column.Strings).Data)
	require.Equal(t, []int64{0, 1}, cols[102].(*column.Ints).Data)

	// Milvus's form of end_ts is physical milliseconds.
	_, end, err := timeRange(map[string]string{"End_Ts": "1000"})
	require.NoError(t, err)
	require.Equal(t, uint64(1000)<<18, end)
	_, end, err = timeRange(map[string]string{"endTs": "460000000000000000"})
	require.NoError(t, err)
	require.Equal(t, uint64(460000000000000000), end)
	_, _, err = timeRange(map[string]string{"start_ts": "5", "end_ts": "4"})
	require.Error(t, err)
}

// TestBackupSegmentDamage: a missing field, a misaligned or corrupt binlog,
// or a prefix with nothing under it is a clear error.
func TestBackupSegmentDamage(t *testing.T) {
	ctx := context.Background()
	schema := backupSchema()
	schema.Fields[4].Nullable = false // not fillable: every sync must have it
	fresh := func() memFiles {
		files := memFiles{}
		writeSync(t, files, schema, 10, []string{"a"}, []int64{100}, true)
		writeSync(t, files, schema, 11, []string{"b"}, []int64{100}, true)
		return files
	}
	open := func(files memFiles) error {
		seg, err := openBackupSegment(ctx, schema, []string{"bk/insert_log/1/2/3"}, files, files, 0, ^uint64(0))
		if err != nil {
			return err
		}
		for k := 0; k < seg.nfiles; k++ {
			if _, _, _, err := seg.read(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}
	require.NoError(t, open(fresh()))

	files := fresh()
	delete(files, storage.InsertLogKey("bk", 1, 2, 3, 102, 10))
	require.ErrorContains(t, open(files), `no binlog for field "n"`)

	files = fresh()
	delete(files, storage.InsertLogKey("bk", 1, 2, 3, 1, 11))
	require.ErrorContains(t, open(files), "not as many")

	files = fresh()
	k := storage.InsertLogKey("bk", 1, 2, 3, 101, 11)
	files[k] = files[k][:len(files[k])-9]
	require.ErrorContains(t, open(files), "binlog "+k)

	require.ErrorContains(t, open(memFiles{}), "no insert binlogs under bk/insert_log/1/2/3")
}

// TestBackupGroups: an insert-log prefix of one segment is one group with
// the task's delta prefixes; a prefix with segment directories below it
// (Milvus's form, which milvus-backup sends: {partition or group}/{segment}/
// {field}/{log}) is one group per segment, each with its own delta-log
// directory, as Milvus's ListBinlogsAndGroupBySegment pairs them.
func TestBackupGroups(t *testing.T) {
	ctx := context.Background()
	files := memFiles{
		"bk/insert_log/1/2/3/0/10":   nil,
		"bk/insert_log/1/2/3/1/10":   nil,
		"bk/insert_log/1/2/3/100/10": nil,
		"bk/insert_log/1/2/12/0/11":  nil,
		"bk/insert_log/1/2/12/1/11":  nil,
	}
	g, err := backupGroups(ctx, []string{"bk/insert_log/1/2/3", "bk/delta_log/1/2/3"}, files)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"bk/insert_log/1/2/3", "bk/delta_log/1/2/3"}}, g)

	g, err = backupGroups(ctx, []string{"bk/insert_log/1/2/", "bk/delta_log/1/2/"}, files)
	require.NoError(t, err)
	require.Equal(t, [][]string{
		{"bk/insert_log/1/2/3", "bk/delta_log/1/2/3"},
		{"bk/insert_log/1/2/12", "bk/delta_log/1/2/12"},
	}, g)

	g, err = backupGroups(ctx, []string{"bk/insert_log/1/2"}, files)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"bk/insert_log/1/2/3"}, {"bk/insert_log/1/2/12"}}, g)

	// milvus-backup sends "" for the delta prefix of a segment without deletes.
	require.NoError(t, checkBackupFiles([]string{"bk/insert_log/1/2/", ""}))
	require.Error(t, checkBackupFiles([]string{"", "bk/delta_log/1/2/"}))
	g, err = backupGroups(ctx, []string{"bk/insert_log/1/2/", ""}, files)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"bk/insert_log/1/2/3"}, {"bk/insert_log/1/2/12"}}, g)

	_, err = backupGroups(ctx, []string{"bk/insert_log/1"}, files)
	require.ErrorContains(t, err, "is not an insert binlog key")
	_, err = backupGroups(ctx, []string{"bk/insert_log/9"}, files)
	require.ErrorContains(t, err, "no insert binlogs")
}

// TestL0Deletes: an L0 import reads every delta log under its prefixes and
// keeps each key deleted in [start_ts, end_ts] once.
func TestL0Deletes(t *testing.T) {
	ctx := context.Background()
	schema := backupSchema()
	files := memFiles{}
	put := func(seg, log int64, pks []string, tss []uint64) {
		b, err := storage.EncodeDeltaLog(storage.Descriptor{CollectionID: 1, PartitionID: 2, SegmentID: seg},
			schemapb.DataType_VarChar, &column.Strings{T: schemapb.DataType_VarChar, Data: pks}, tss)
		require.NoError(t, err)
		files[storage.DeltaLogKey("bk", 1, 2, seg, log)] = b
	}
	put(9, 1, []string{"b", "a", "z"}, []uint64{150, 160, 900})
	put(9, 2, []string{"a", "c"}, []uint64{170, 40})
	pks, tss, size, err := readL0Deletes(ctx, schema, []string{"bk/delta_log/1/2/9"}, files, files, 100, 500)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, pks.(*column.Strings).Data)
	require.Equal(t, []uint64{170, 150}, tss, "each key's latest delete in range")
	require.Positive(t, size)
	require.True(t, isL0Import(map[string]string{"L0_Import": "true"}))
	require.False(t, isL0Import(map[string]string{"backup": "true"}))
}
