package e2e

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// TestMmapFilesCollectedOnDrop, through the Milvus Go SDK, with every
// mmap setting on: the cache files under {data-dir}/cache/mmap of a
// released collection stay for its next load; those of a dropped
// collection are removed (its columns and its index files), those of a
// dropped partition go while the other partition's stay, those of a
// dropped index go while the collection's columns stay, and once every
// collection is dropped the directory holds no file.
func TestMmapFilesCollectedOnDrop(t *testing.T) {
	const rows, vdim = 700, 8
	dir := t.TempDir()
	s := startServer(t, dir, func(c *app.Config) {
		c.QueryNode.Mmap.VectorIndex, c.QueryNode.Mmap.VectorField, c.QueryNode.Mmap.ScalarField = true, true, true
	})
	c := s.client(t)
	ctx := ctxT(t)
	rng := rand.New(rand.NewPCG(3, 26))
	// files lists the cache files, relative to the mmap directories (a
	// cluster has one per query node).
	files := func() []string {
		var out []string
		for _, mmap := range s.mmapDirs() {
			_ = filepath.WalkDir(mmap, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(mmap, p)
					out = append(out, filepath.ToSlash(rel))
				}
				return nil
			})
		}
		return out
	}
	// owned returns the files of the collection with ID id: its columns
	// (columns/{id}/{partition}/…) and the index files of its partitions
	// (…/index_files/{build}/{version}/{partition}/…).
	owned := func(id int64, all []string) (cols, idx []string) {
		parts := map[string]bool{}
		for _, f := range all {
			if rest, ok := strings.CutPrefix(f, fmt.Sprintf("columns/%d/", id)); ok {
				cols = append(cols, f)
				parts[strings.Split(rest, "/")[0]] = true
			}
		}
		for _, f := range all {
			if _, rest, ok := strings.Cut(f, "index_files/"); ok {
				if ids := strings.Split(rest, "/"); len(ids) > 2 && parts[ids[2]] {
					idx = append(idx, f)
				}
			}
		}
		return cols, idx
	}

	ids := map[string]int64{}
	for _, coll := range []string{"mmap_keep", "mmap_gone"} {
		schema := entity.NewSchema().WithName(coll).
			WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
			WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(vdim))
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
		pks := make([]int64, rows)
		vecs := make([][]float32, rows)
		for i := range vecs {
			pks[i] = int64(i)
			vecs[i] = make([]float32, vdim)
			for j := range vecs[i] {
				vecs[i][j] = rng.Float32()
			}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", pks).WithFloatVectorColumn("vec", vdim, vecs))
		require.NoError(t, err)
		if coll == "mmap_keep" {
			require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p2")))
			for i := range pks {
				pks[i] += rows
			}
			_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithPartition("p2").
				WithInt64Column("id", pks).WithFloatVectorColumn("vec", vdim, vecs))
			require.NoError(t, err)
		}
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vec", index.NewHNSWIndex(entity.L2, 16, 64)))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
		rs, err := c.Search(ctx, milvusclient.NewSearchOption(coll, 5, []entity.Vector{entity.FloatVector(vecs[1])}).
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, 5, rs[0].ResultCount)
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
		desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
		require.NoError(t, err)
		ids[coll] = desc.ID
	}

	all := files()
	keepCols, keepIdx := owned(ids["mmap_keep"], all)
	goneCols, goneIdx := owned(ids["mmap_gone"], all)
	require.NotEmpty(t, keepCols)
	require.NotEmpty(t, keepIdx)
	require.NotEmpty(t, goneCols)
	require.NotEmpty(t, goneIdx)
	require.Len(t, all, len(keepCols)+len(keepIdx)+len(goneCols)+len(goneIdx), "%v", all)

	// Released, not dropped: every file stays (a collection round runs at
	// start and after each drop, and none has happened since the loads).
	require.ElementsMatch(t, all, files())

	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("mmap_gone")))
	want := append(append([]string{}, keepCols...), keepIdx...)
	require.Eventually(t, func() bool {
		for _, mmap := range s.mmapDirs() {
			if _, err := os.Stat(filepath.Join(mmap, "columns", fmt.Sprint(ids["mmap_gone"]))); !os.IsNotExist(err) {
				return false
			}
		}
		return len(files()) == len(want)
	}, 20*time.Second, 50*time.Millisecond, "the dropped collection's files and directories are removed: %v", files())
	require.ElementsMatch(t, want, files())

	// Drop the partition p2 (created after _default, so its ID is the
	// larger): its files go, those of _default stay.
	var maxPart int64
	for _, f := range keepCols {
		p, err := strconv.ParseInt(strings.Split(f, "/")[2], 10, 64)
		require.NoError(t, err)
		maxPart = max(maxPart, p)
	}
	p2 := strconv.FormatInt(maxPart, 10)
	inP2 := func(f string) bool {
		if rest, ok := strings.CutPrefix(f, fmt.Sprintf("columns/%d/", ids["mmap_keep"])); ok {
			return strings.Split(rest, "/")[0] == p2
		}
		_, rest, _ := strings.Cut(f, "index_files/")
		return strings.Split(rest, "/")[2] == p2
	}
	var rest []string
	for _, f := range want {
		if !inP2(f) {
			rest = append(rest, f)
		}
	}
	require.Less(t, len(rest), len(want))
	require.NotEmpty(t, rest)
	require.NoError(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption("mmap_keep", "p2")))
	require.Eventually(t, func() bool { return len(files()) == len(rest) }, 20*time.Second, 50*time.Millisecond,
		"the dropped partition's files are removed: %v", files())
	require.ElementsMatch(t, rest, files())
	keepCols = slices.DeleteFunc(keepCols, inP2)

	require.NoError(t, c.DropIndex(ctx, milvusclient.NewDropIndexOption("mmap_keep", "vec")))
	require.Eventually(t, func() bool { return len(files()) == len(keepCols) }, 20*time.Second, 50*time.Millisecond,
		"the dropped index's files are removed: %v", files())
	require.ElementsMatch(t, keepCols, files(), "the columns of the released collection stay")

	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("mmap_keep")))
	require.Eventually(t, func() bool { return len(files()) == 0 }, 20*time.Second, 50*time.Millisecond,
		"nothing is left: %v", files())
}
