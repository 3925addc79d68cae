package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/backup"
)

// snapshotRows reads every row of a collection (Strong) as pk → field →
// value text; JSON is compared as canonical JSON.
func snapshotRows(t *testing.T, c *milvusclient.Client, coll, filter string) map[string]map[string]string {
	t.Helper()
	ctx := ctxT(t)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter(filter).WithOutputFields("*").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	var pkName string
	for _, f := range rs.Fields {
		if f.Name() == "pk" || f.Name() == "id" {
			pkName = f.Name()
		}
	}
	require.NotEmpty(t, pkName)
	out := map[string]map[string]string{}
	for i := 0; i < rs.ResultCount; i++ {
		row := map[string]string{}
		for _, f := range rs.Fields {
			row[f.Name()] = cellText(t, f, i)
		}
		pk := row[pkName]
		require.NotContains(t, out, pk, "duplicate key %s in %s", pk, coll)
		out[pk] = row
	}
	return out
}

func cellText(t *testing.T, f column.Column, i int) string {
	t.Helper()
	if null, err := f.IsNull(i); err == nil && null {
		return "<null>"
	}
	v, err := f.Get(i)
	require.NoError(t, err)
	if b, ok := v.([]byte); ok && (f.Type() == entity.FieldTypeJSON) {
		var x any
		require.NoError(t, json.Unmarshal(b, &x))
		c, err := json.Marshal(x)
		require.NoError(t, err)
		return string(c)
	}
	return fmt.Sprintf("%v", v)
}

// writeBackupSource makes "src": a VarChar key, partitions p1 and p2, a
// nullable field, the dynamic field and an HNSW index; rows flushed,
// growing, deleted and upserted. And "auto": an auto-ID Int64 key.
func writeBackupSource(t *testing.T, c *milvusclient.Client) {
	ctx := ctxT(t)
	schema := entity.NewSchema().WithName("src").WithDynamicFieldEnabled(true).
		WithField(entity.NewField().WithName("pk").WithDataType(entity.FieldTypeVarChar).WithMaxLength(32).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("age").WithDataType(entity.FieldTypeInt32).WithNullable(true)).
		WithField(entity.NewField().WithName("title").WithDataType(entity.FieldTypeVarChar).WithMaxLength(64)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("src", schema).
		WithIndexOptions(milvusclient.NewCreateIndexOption("src", "v", index.NewHNSWIndex(entity.L2, 8, 64)))))
	for _, p := range []string{"p1", "p2"} {
		require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("src", p)))
	}
	insert := func(part string, lo, hi int, tag string) {
		var pks, titles []string
		var ages []int32
		var valid []bool
		var vecs [][]float32
		var metas [][]byte
		for i := lo; i < hi; i++ {
			pks = append(pks, fmt.Sprintf("k%04d", i))
			titles = append(titles, fmt.Sprintf("%s-%d", tag, i))
			valid = append(valid, i%5 != 0)
			if i%5 != 0 {
				ages = append(ages, int32(i))
			}
			vecs = append(vecs, []float32{float32(i), float32(i % 7), 1, float32(len(tag))})
			metas = append(metas, []byte(fmt.Sprintf(`{"color":"c%d","n":%d}`, i%3, i)))
		}
		age, err := column.NewNullableColumnInt32("age", ages, valid)
		require.NoError(t, err)
		opt := milvusclient.NewColumnBasedInsertOption("src").WithPartition(part).
			WithVarcharColumn("pk", pks).WithColumns(age, column.NewColumnJSONBytes("$meta", metas).WithIsDynamic(true)).
			WithVarcharColumn("title", titles).WithFloatVectorColumn("v", 4, vecs)
		if strings.HasPrefix(tag, "up") {
			_, err = c.Upsert(ctx, opt)
		} else {
			_, err = c.Insert(ctx, opt)
		}
		require.NoError(t, err)
	}
	insert("_default", 0, 100, "a")
	insert("p1", 100, 200, "a")
	insert("p2", 200, 300, "a")
	task, err := c.Flush(ctx, milvusclient.NewFlushOption("src"))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))
	insert("p1", 300, 350, "b") // growing until the backup's flush
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption("src").WithStringIDs("pk", []string{"k0001", "k0150", "k0250", "k0310"}))
	require.NoError(t, err)
	insert("p2", 205, 210, "up") // upserts of flushed rows

	auto := entity.NewSchema().WithName("auto").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true).WithIsAutoID(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("auto", auto).
		WithIndexOptions(milvusclient.NewCreateIndexOption("auto", "v", index.NewFlatIndex(entity.L2)))))
	var vecs [][]float32
	for i := 0; i < 60; i++ {
		vecs = append(vecs, []float32{float32(i), 0, 0, 1})
	}
	res, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("auto").WithFloatVectorColumn("v", 4, vecs))
	require.NoError(t, err)
	ids := res.IDs.(*column.ColumnInt64).Data()
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption("auto").WithInt64IDs("id", ids[:5]))
	require.NoError(t, err)
}

// TestBackupRestore: `strata backup create` of a running server, writes
// after it, `strata backup restore` under new names, and every row of the
// restored collections equals the original's at the backup (keys, nulls,
// dynamic fields, deletes and upserts); rows and deletes after the backup
// are not in it. A damaged or incomplete backup fails the restore with a
// clear error and leaves no collection behind.
func TestBackupRestore(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	writeBackupSource(t, c)
	for _, n := range []string{"src", "auto"} {
		require.NoError(t, waitLoad(ctx, c, n))
	}
	wantSrc := snapshotRows(t, c, "src", `pk != ""`)
	wantAuto := snapshotRows(t, c, "auto", "id > 0")
	require.Len(t, wantSrc, 346)
	require.Len(t, wantAuto, 55)

	bk := filepath.Join(t.TempDir(), "backups")
	stdout, stderr, code := runTool(t, bin, append([]string{"backup", "create", "--addr", s.addr, "--out", bk, "--name", "b1"}, s.storeArgs(t)...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stdout, "backup b1: 2 collections")

	// Writes after the backup: none of them may be in it.
	_, err := c.Delete(ctx, milvusclient.NewDeleteOption("src").WithStringIDs("pk", []string{"k0002", "k0120", "k0320"}))
	require.NoError(t, err)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("src").WithVarcharColumn("pk", []string{"late1", "late2"}).
		WithColumns(column.NewColumnJSONBytes("$meta", [][]byte{[]byte(`{}`), []byte(`{}`)}).WithIsDynamic(true)).
		WithVarcharColumn("title", []string{"l", "l"}).WithFloatVectorColumn("v", 4, [][]float32{{1, 1, 1, 1}, {2, 2, 2, 2}}))
	require.NoError(t, err)
	task, err := c.Flush(ctx, milvusclient.NewFlushOption("src"))
	require.NoError(t, err)
	require.NoError(t, task.Await(ctx))

	stdout, _, code = runTool(t, bin, "backup", "list", "--out", bk)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "b1\t")
	require.Contains(t, stdout, "collections=auto,src")

	// A damaged copy of the backup, and one missing a file: the restore
	// fails before creating anything.
	var binlog string
	require.NoError(t, filepath.Walk(filepath.Join(bk, "b1", "binlogs", "insert_log"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && binlog == "" {
			binlog = p
		}
		return err
	}))
	require.NotEmpty(t, binlog)
	orig, err := os.ReadFile(binlog)
	require.NoError(t, err)
	// Cut in half: every binlog reader refuses it (a flipped byte can land
	// in an uncompressed vector value and parse as another number).
	bad := append([]byte(nil), orig[:len(orig)/2]...)
	require.NoError(t, os.WriteFile(binlog, bad, 0o644))
	_, stderr, code = runTool(t, bin, append([]string{
		"backup", "restore", "--addr", s.addr, "--from", bk, "--name", "b1",
		"--rename", "src=bad1,auto=bad2",
	}, s.storeArgs(t)...)...)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is damaged")
	require.NoError(t, os.Remove(binlog))
	_, stderr, code = runTool(t, bin, append([]string{
		"backup", "restore", "--addr", s.addr, "--from", bk, "--name", "b1",
		"--rename", "src=bad1,auto=bad2",
	}, s.storeArgs(t)...)...)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "is missing")
	requireNoCollection(t, c, "bad1", "bad2")
	// Damage the checksums do not catch (the manifest rewritten to match):
	// the import fails, and the collections the restore created are dropped.
	manifestPath := filepath.Join(bk, "b1", backup.ManifestFile)
	origManifest, err := os.ReadFile(manifestPath)
	require.NoError(t, err)
	var m backup.Manifest
	require.NoError(t, json.Unmarshal(origManifest, &m))
	rel, err := filepath.Rel(filepath.Join(bk, "b1", backup.DataDir), binlog)
	require.NoError(t, err)
	sum := sha256.Sum256(bad)
	found := false
	for ci := range m.Collections {
		for si := range m.Collections[ci].Segments {
			for fi, f := range m.Collections[ci].Segments[si].Files {
				if f.Key == filepath.ToSlash(rel) {
					m.Collections[ci].Segments[si].Files[fi] = backup.File{Key: f.Key, Size: int64(len(bad)), SHA256: hex.EncodeToString(sum[:])}
					found = true
				}
			}
		}
	}
	require.True(t, found)
	forged, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(manifestPath, forged, 0o644))
	require.NoError(t, os.WriteFile(binlog, bad, 0o644))
	_, stderr, code = runTool(t, bin, append([]string{
		"backup", "restore", "--addr", s.addr, "--from", bk, "--name", "b1",
		"--rename", "src=bad1,auto=bad2",
	}, s.storeArgs(t)...)...)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "import job")
	requireNoCollection(t, c, "bad1", "bad2")
	require.NoError(t, os.WriteFile(manifestPath, origManifest, 0o644))
	require.NoError(t, os.WriteFile(binlog, orig, 0o644))

	// Restoring over an existing name is refused.
	_, stderr, code = runTool(t, bin, append([]string{"backup", "restore", "--addr", s.addr, "--from", bk, "--name", "b1"}, s.storeArgs(t)...)...)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, `exists already; restore it under another name`)

	start := time.Now()
	stdout, stderr, code = runTool(t, bin, append([]string{
		"backup", "restore", "--addr", s.addr, "--from", bk, "--name", "b1",
		"--rename", "src=dst,auto=auto2",
	}, s.storeArgs(t)...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	t.Logf("restore: %s (%s)", strings.TrimSpace(stdout), time.Since(start))

	for _, n := range []string{"dst", "auto2"} {
		require.NoError(t, waitLoad(ctx, c, n))
	}
	gotSrc := snapshotRows(t, c, "dst", `pk != ""`)
	gotAuto := snapshotRows(t, c, "auto2", "id > 0")
	requireSameRows(t, wantSrc, gotSrc)
	requireSameRows(t, wantAuto, gotAuto)

	// The index was recreated, and search works on the restored data.
	idx, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption("dst", "v"))
	require.NoError(t, err)
	require.Equal(t, "HNSW", idx.Params()["index_type"])
	srcIdx, err := c.DescribeIndex(ctx, milvusclient.NewDescribeIndexOption("src", "v"))
	require.NoError(t, err)
	require.Equal(t, srcIdx.Params(), idx.Params())
	rs, err := c.Search(ctx, milvusclient.NewSearchOption("dst", 3, []entity.Vector{entity.FloatVector{7, 0, 1, 1}}).
		WithANNSField("v").WithOutputFields("title").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	require.Equal(t, 3, rs[0].ResultCount)

	// Partitions came back with their rows.
	parts, err := c.ListPartitions(ctx, milvusclient.NewListPartitionOption("dst"))
	require.NoError(t, err)
	sort.Strings(parts)
	require.Equal(t, []string{"_default", "p1", "p2"}, parts)
	p1, err := c.Query(ctx, milvusclient.NewQueryOption("dst").WithPartitions("p1").WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := p1.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.Equal(t, int64(148), n) // 100 + 50 growing, less k0150 and k0310
}

// requireNoCollection fails unless none of the collections exists.
func requireNoCollection(t *testing.T, c *milvusclient.Client, names ...string) {
	t.Helper()
	for _, n := range names {
		has, err := c.HasCollection(ctxT(t), milvusclient.NewHasCollectionOption(n))
		require.NoError(t, err)
		require.False(t, has, n)
	}
}

// waitLoad loads a collection and waits until it is loaded.
func waitLoad(ctx context.Context, c *milvusclient.Client, coll string) error {
	task, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	if err != nil {
		return err
	}
	return task.Await(ctx)
}

func requireSameRows(t *testing.T, want, got map[string]map[string]string) {
	t.Helper()
	require.Len(t, got, len(want))
	for pk, w := range want {
		g, ok := got[pk]
		require.True(t, ok, "key %s is missing", pk)
		require.Equal(t, w, g, "key %s", pk)
	}
}
