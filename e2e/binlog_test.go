package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// objectTree lists the object keys under root/files (root: the server's
// storageDir) as path elements.
func objectTree(t *testing.T, root string) [][]string {
	t.Helper()
	var out [][]string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "files"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, strings.Split(filepath.ToSlash(rel), "/"))
		return nil
	}))
	return out
}

func ids(t *testing.T, parts []string) []int64 {
	t.Helper()
	out := make([]int64, len(parts))
	for i, s := range parts {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "path element %q is not an ID", s)
		out[i] = v
	}
	return out
}

func TestBinlogsInObjectStore(t *testing.T) {
	dir := t.TempDir()
	// Only the flush syncs: one binlog per field per segment.
	s := startServer(t, dir, func(c *app.Config) { c.DataNode.SyncPeriod = time.Hour })
	c := s.client(t)
	ctx := ctxT(t)
	const coll, n, vdim = "blogs", 300, 4
	schema := entity.NewSchema().WithName(coll).WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("title").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32)).
		WithField(entity.NewField().WithName("year").WithDataType(entity.FieldTypeInt32)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(vdim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(2)))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	collID := desc.ID

	titles := map[int64]string{}
	years := map[int64]int64{}
	vecs := map[int64][]float32{}
	for batch := 0; batch < 2; batch++ {
		var bIDs []int64
		var bTitles []string
		var bYears []int32
		var bVecs [][]float32
		for i := batch * n / 2; i < (batch+1)*n/2; i++ {
			id := int64(i)
			v := []float32{float32(i), 1, 2, 3}
			titles[id], years[id], vecs[id] = fmt.Sprintf("t-%d", i), int64(1900+i), v
			bIDs, bTitles, bYears, bVecs = append(bIDs, id), append(bTitles, titles[id]), append(bYears, int32(1900+i)), append(bVecs, v)
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", bIDs).
			WithVarcharColumn("title", bTitles).WithInt32Column("year", bYears).WithFloatVectorColumn("vec", vdim, bVecs))
		require.NoError(t, err)
	}
	deleted := []int64{0, 1, 2, 3, 4, 5, 150, 151, 298, 299}
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithInt64IDs("id", deleted))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	// Field IDs: id 100, title 101, year 102, vec 103, $meta 104; system 0 and 1.
	wantFields := []int64{0, 1, 100, 101, 102, 103, 104}
	type segKey struct{ part, seg int64 }
	insertLogs := map[segKey]map[int64][]string{} // field → files
	statsLogs := map[segKey][]int64{}
	var deltaFiles []string
	root := s.storageDir(t)
	for _, p := range objectTree(t, root) {
		file := filepath.Join(append([]string{root}, p...)...)
		require.Equal(t, "files", p[0])
		switch p[1] {
		case "insert_log":
			require.Len(t, p, 7, "files/insert_log/{coll}/{part}/{seg}/{field}/{logID}: %v", p)
			v := ids(t, p[2:])
			require.Equal(t, collID, v[0])
			k := segKey{v[1], v[2]}
			if insertLogs[k] == nil {
				insertLogs[k] = map[int64][]string{}
			}
			insertLogs[k][v[3]] = append(insertLogs[k][v[3]], file)
		case "stats_log":
			require.Len(t, p, 7, "files/stats_log/{coll}/{part}/{seg}/{pkField}/{logID}: %v", p)
			v := ids(t, p[2:])
			require.Equal(t, collID, v[0])
			require.EqualValues(t, 100, v[3], "stats logs are under the pk field")
			statsLogs[segKey{v[1], v[2]}] = append(statsLogs[segKey{v[1], v[2]}], v[4])
		case "delta_log":
			require.Len(t, p, 6, "files/delta_log/{coll}/{part}/{seg}/{logID}: %v", p)
			v := ids(t, p[2:])
			require.Equal(t, collID, v[0])
			require.EqualValues(t, -1, v[1], "L0 segments hold deletes of every partition")
			deltaFiles = append(deltaFiles, file)
		default:
			t.Fatalf("unexpected object %v", p)
		}
	}
	require.NotEmpty(t, insertLogs)
	require.GreaterOrEqual(t, len(insertLogs), 2, "two shards give at least two segments")

	seenPK := map[int64]bool{}
	seenRowID := map[int64]bool{}
	var someInsertLog string
	for k, fields := range insertLogs {
		var got []int64
		for f := range fields {
			got = append(got, f)
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		require.Equal(t, wantFields, got, "segment %d has a binlog for every field", k.seg)

		decoded := map[int64]column.Column{}
		rows := -1
		for f, files := range fields {
			require.Len(t, files, 1, "one sync per segment: one file per field")
			data, err := os.ReadFile(files[0])
			require.NoError(t, err)
			b, err := storage.DecodeBinlog(data)
			require.NoError(t, err, files[0])
			d := b.Descriptor
			require.Equal(t, []int64{collID, k.part, k.seg, f}, []int64{d.CollectionID, d.PartitionID, d.SegmentID, d.FieldID})
			require.Equal(t, storage.InsertEventType, b.EventType())
			require.NotZero(t, d.StartTimestamp)
			require.LessOrEqual(t, d.StartTimestamp, d.EndTimestamp)
			total := 0
			for _, ev := range b.Events {
				total += ev.Rows
			}
			require.Equal(t, b.Column().Len(), total)
			if rows < 0 {
				rows = total
			}
			require.Equal(t, rows, total, "every field of segment %d has the same row count", k.seg)
			decoded[f] = b.Column()
			if f == 100 {
				someInsertLog = files[0]
			}
		}
		pks := decoded[100].(*column.Ints).Data
		tss := decoded[1].(*column.Ints).Data
		rowIDs := decoded[0].(*column.Ints).Data
		tit := decoded[101].(*column.Strings).Data
		yr := decoded[102].(*column.Ints).Data
		vec := decoded[103].(*column.FloatVectors)
		meta := decoded[104].(*column.JSONs).Data
		for i, pk := range pks {
			require.False(t, seenPK[pk], "pk %d stored twice", pk)
			seenPK[pk] = true
			require.False(t, seenRowID[rowIDs[i]], "row id %d repeated", rowIDs[i])
			seenRowID[rowIDs[i]] = true
			require.NotZero(t, tss[i], "timestamp of pk %d", pk)
			require.Equal(t, titles[pk], tit[i])
			require.Equal(t, years[pk], yr[i])
			require.Equal(t, vecs[pk], vec.Row(i))
			require.JSONEq(t, "{}", string(meta[i]))
		}

		// Stats: one per-sync log and the merged `1`, a JSON array over the pks.
		logs := statsLogs[k]
		sort.Slice(logs, func(i, j int) bool { return logs[i] < logs[j] })
		require.Len(t, logs, 2, "segment %d: per-sync stats log and merged 1", k.seg)
		require.EqualValues(t, 1, logs[0])
		merged, err := os.ReadFile(filepath.Join(root, storage.CompoundStatsLogKey("", collID, k.part, k.seg, 100)))
		require.NoError(t, err)
		var arr []json.RawMessage
		require.NoError(t, json.Unmarshal(merged, &arr), "merged stats log is a JSON array")
		require.Len(t, arr, 1)
		for _, file := range []string{
			storage.CompoundStatsLogKey("", collID, k.part, k.seg, 100),
			storage.StatsLogKey("", collID, k.part, k.seg, 100, logs[1]),
		} {
			data, err := os.ReadFile(filepath.Join(root, file))
			require.NoError(t, err)
			st, err := storage.UnmarshalStats(data)
			require.NoError(t, err, file)
			require.Len(t, st, 1)
			lo, hi := pks[0], pks[0]
			for _, pk := range pks {
				require.True(t, st[0].MayContain(pk))
				lo, hi = min(lo, pk), max(hi, pk)
			}
			require.Equal(t, lo, st[0].Min())
			require.Equal(t, hi, st[0].Max())
		}
	}
	require.Len(t, seenPK, n, "every inserted row is in exactly one segment (deleted rows stay until compaction)")

	// Delta logs: the deleted pks, with timestamps.
	require.NotEmpty(t, deltaFiles)
	var gotDeleted []int64
	for _, f := range deltaFiles {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		pks, tss, err := storage.DecodeDeltaLog(data)
		require.NoError(t, err, f)
		require.Equal(t, schemapb.DataType_Int64, pks.Type())
		require.Len(t, tss, pks.Len())
		for i := range tss {
			require.NotZero(t, tss[i])
		}
		gotDeleted = append(gotDeleted, pks.(*column.Ints).Data...)
	}
	require.ElementsMatch(t, deleted, gotDeleted)

	// The dump tool names the IDs and prints the rows.
	bin := buildBinary(t)
	out, err := exec.Command(bin, "binlog", "dump", "--max-rows", "3", someInsertLog).CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(someInsertLog)
	require.NoError(t, err)
	bl, err := storage.DecodeBinlog(b)
	require.NoError(t, err)
	d := bl.Descriptor
	text := string(out)
	require.Contains(t, text, fmt.Sprintf("collection=%d partition=%d segment=%d field=100", d.CollectionID, d.PartitionID, d.SegmentID))
	require.Contains(t, text, fmt.Sprintf("rows: %d", bl.Column().Len()))
	require.Contains(t, text, fmt.Sprintf("0\t%d", bl.Column().(*column.Ints).Data[0]))
	require.Contains(t, text, "more")
	out, err = exec.Command(bin, "binlog", "dump", deltaFiles[0]).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "deletes:")
}
