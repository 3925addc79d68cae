package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// copyTree copies every file under src to the same relative path under dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	}))
}

// TestMilvusBackupLayoutImport restores a collection the way milvus-backup
// 0.5 does: the flushed segments' binlogs copied to
// {backup}/binlogs/insert_log/{coll}/{part}/{group}/{seg}/{field}/{log} (and
// delta_log likewise, group = segment ID), one backup import per segment
// group with the group-level prefixes (Milvus lists the segments below
// them), then one l0_import per L0 segment with its delta-log prefix, in its
// partition or, for partition -1, in all. Every row of the copy equals the
// original's: the deletes the L0 segments hold are applied, and an upsert's
// delete (at its new row's timestamp) leaves the new row, as the rows and
// the deletes keep their own timestamps.
func TestMilvusBackupLayoutImport(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)
	schema := func(name string) *entity.Schema {
		return entity.NewSchema().WithName(name).WithDynamicFieldEnabled(true).
			WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("title").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32)).
			WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	}
	for _, name := range []string{"src", "dst"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(name, schema(name)).
			WithIndexOptions(milvusclient.NewCreateIndexOption(name, "v", index.NewFlatIndex(entity.L2)))))
		require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(name, "p1")))
	}
	write := func(part string, keys []int64, tag string) {
		var titles []string
		var vecs [][]float32
		for _, i := range keys {
			titles = append(titles, fmt.Sprintf("%s%d", tag, i))
			vecs = append(vecs, []float32{float32(i), 1, 2, float32(len(tag))})
		}
		opt := milvusclient.NewColumnBasedInsertOption("src").WithPartition(part).
			WithInt64Column("pk", keys).WithVarcharColumn("title", titles).WithFloatVectorColumn("v", 4, vecs)
		var err error
		if tag == "up" {
			_, err = c.Upsert(ctx, opt)
		} else {
			_, err = c.Insert(ctx, opt)
		}
		require.NoError(t, err)
	}
	insert := func(part string, lo, hi int) {
		var keys []int64
		for i := lo; i < hi; i++ {
			keys = append(keys, int64(i))
		}
		write(part, keys, "t")
	}
	flush := func() {
		task, err := c.Flush(ctx, milvusclient.NewFlushOption("src"))
		require.NoError(t, err)
		require.NoError(t, task.Await(ctx))
	}
	insert("_default", 0, 100)
	insert("p1", 100, 200)
	flush()
	insert("_default", 200, 300)
	flush()
	_, err := c.Delete(ctx, milvusclient.NewDeleteOption("src").WithInt64IDs("pk", []int64{3, 150, 250, 199}))
	require.NoError(t, err)
	// Upserts: each writes a delete and the new row at one timestamp; the
	// delete (in an L0 segment) must not remove the new row after a restore.
	write("_default", []int64{10, 210}, "up")
	write("p1", []int64{110}, "up")
	flush()

	segs, err := raw.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: "src"})
	require.NoError(t, err)
	require.Zero(t, segs.GetStatus().GetCode(), segs.GetStatus().GetReason())
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("src"))
	require.NoError(t, err)
	parts, err := raw.ShowPartitions(ctx, &milvuspb.ShowPartitionsRequest{CollectionName: "src"})
	require.NoError(t, err)
	partName := map[int64]string{-1: ""}
	for i, id := range parts.GetPartitionIDs() {
		partName[id] = parts.GetPartitionNames()[i]
	}

	store := s.storageDir(t)
	coll := desc.ID
	type job struct {
		part  string
		files []string
		opt   string
	}
	var l1, l0 []job
	for _, sg := range segs.GetInfos() {
		if sg.GetState() != commonpb.SegmentState_Flushed {
			continue
		}
		seg, part := sg.GetSegmentID(), sg.GetPartitionID()
		src := func(kind string) string {
			return filepath.Join(store, "files", kind, fmt.Sprint(coll), fmt.Sprint(part), fmt.Sprint(seg))
		}
		if sg.GetLevel() == commonpb.SegmentLevel_L0 {
			key := fmt.Sprintf("mb/binlogs/delta_log/%d/%d/%d/", coll, part, seg)
			copyTree(t, src("delta_log"), filepath.Join(store, key))
			l0 = append(l0, job{partName[part], []string{key}, "l0_import"})
			continue
		}
		group := fmt.Sprintf("%d/%d/%d", coll, part, seg)
		copyTree(t, src("insert_log"), filepath.Join(store, "mb/binlogs/insert_log", group, fmt.Sprint(seg)))
		if _, err := os.Stat(src("delta_log")); err == nil {
			copyTree(t, src("delta_log"), filepath.Join(store, "mb/binlogs/delta_log", group, fmt.Sprint(seg)))
		}
		l1 = append(l1, job{partName[part], []string{"mb/binlogs/insert_log/" + group + "/", "mb/binlogs/delta_log/" + group + "/"}, "backup"})
	}
	require.GreaterOrEqual(t, len(l1), 3, "the flushed L1 segments")
	require.NotEmpty(t, l0, "the deletes are in L0 segments")

	for _, j := range append(l1, l0...) {
		resp, err := raw.Import(ctx, &milvuspb.ImportRequest{
			CollectionName: "dst", PartitionName: j.part, Files: j.files,
			Options: []*commonpb.KeyValuePair{{Key: "skip_disk_quota_check", Value: "true"}, {Key: j.opt, Value: "true"}},
		})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		st := waitImport(t, raw, resp.GetTasks()[0])
		require.Equal(t, commonpb.ImportState_ImportCompleted, st.GetState(), "%v: %s", j.files, importInfo(st, "failed_reason"))
	}

	for _, name := range []string{"src", "dst"} {
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(name))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
	}
	want := snapshotRows(t, c, "src", "pk >= 0")
	require.Len(t, want, 296)
	require.Equal(t, want, snapshotRows(t, c, "dst", "pk >= 0"))
	p1 := func(name string) int {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(name).WithPartitions("p1").WithFilter("pk >= 0").
			WithOutputFields("pk").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		return rs.ResultCount
	}
	require.Equal(t, 98, p1("dst"))
	require.Equal(t, p1("src"), p1("dst"))
	require.NotContains(t, want, "3", "key 3 was deleted")
	require.Equal(t, "up110", want["110"]["title"], "key 110 was upserted")
	require.Equal(t, "up210", want["210"]["title"])
}
