package e2e

import (
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/milvus-io/milvus/client/v2/column"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestMmapEnabled, through the Milvus Go SDK: a collection loaded with the
// property mmap.enabled=true (set by AlterCollectionProperties after a
// release, as Milvus requires; refused while loaded) answers search and
// query exactly as it did loaded into memory, describe_collection shows
// the property, and the query node wrote its cache files under
// {data-dir}/cache/mmap. The same holds after deleting the property and
// mapping the index alone (AlterIndexProperties mmap.enabled).
func TestMmapEnabled(t *testing.T) {
	const rows, vdim, coll = 3001, 16, "mmap_on"
	rng := rand.New(rand.NewPCG(2, 15))
	vecs := make([][]float32, rows)
	ids := make([]int64, rows)
	for i := range vecs {
		ids[i] = int64(i)
		vecs[i] = make([]float32, vdim)
		for j := range vecs[i] {
			vecs[i][j] = rng.Float32()*2 - 1
		}
	}
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("tag").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(vdim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema)))
	tags := make([]int64, rows)
	for i := range tags {
		tags[i] = int64(i % 7)
	}
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).
		WithInt64Column("id", ids).WithInt64Column("tag", tags).WithFloatVectorColumn("vec", vdim, vecs))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vec", index.NewHNSWIndex(entity.L2, 16, 64)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	load := func() {
		t.Helper()
		lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
		require.NoError(t, err)
		require.NoError(t, lt.Await(ctx))
	}
	release := func() {
		t.Helper()
		require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))
	}

	// read returns, as bit patterns, what a client sees: the hits of a
	// plain and a filtered search with the vectors as output, and a query
	// of every row.
	read := func() (out []uint64) {
		t.Helper()
		queries := []entity.Vector{entity.FloatVector(vecs[5]), entity.FloatVector(vecs[2999])}
		for _, filter := range []string{"", "tag == 3"} {
			opt := milvusclient.NewSearchOption(coll, 10, queries).WithOutputFields("vec").WithConsistencyLevel(entity.ClStrong)
			if filter != "" {
				opt = opt.WithFilter(filter)
			}
			rs, err := c.Search(ctx, opt)
			require.NoError(t, err)
			for _, r := range rs {
				require.Equal(t, 10, r.ResultCount)
				for i := range r.ResultCount {
					id, err := r.IDs.GetAsInt64(i)
					require.NoError(t, err)
					out = append(out, uint64(id), uint64(math.Float32bits(r.Scores[i])))
				}
				fv := r.GetColumn("vec").(*column.ColumnFloatVector)
				for i := range fv.Len() {
					v, err := fv.Value(i)
					require.NoError(t, err)
					for _, x := range v {
						out = append(out, uint64(math.Float32bits(x)))
					}
				}
			}
		}
		qr, err := c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id >= 0").WithLimit(rows).
			WithOutputFields("tag", "vec").WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		require.Equal(t, rows, qr.ResultCount)
		fv := qr.GetColumn("vec").(*column.ColumnFloatVector)
		for i := range qr.ResultCount {
			id, err := qr.GetColumn("id").GetAsInt64(i)
			require.NoError(t, err)
			out = append(out, uint64(id))
			v, err := fv.Value(i)
			require.NoError(t, err)
			for j, x := range v {
				require.Equal(t, math.Float32bits(vecs[id][j]), math.Float32bits(x), "row %d", id)
			}
		}
		return out
	}
	cacheFiles := func() int {
		n := 0
		for _, mmap := range s.mmapDirs() {
			_ = filepath.WalkDir(mmap, func(_ string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return nil
			})
		}
		return n
	}

	load()
	want := read()
	require.Zero(t, cacheFiles(), "mmap is off by default")

	err = c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(coll).WithProperty("mmap.enabled", true))
	require.ErrorContains(t, err, "can not alter mmap properties if collection loaded")

	release()
	require.NoError(t, c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption(coll).WithProperty("mmap.enabled", true)))
	desc, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption(coll))
	require.NoError(t, err)
	require.Equal(t, "true", desc.Properties["mmap.enabled"])
	load()
	require.Positive(t, cacheFiles(), "the index file is cached to be mapped")
	require.Equal(t, want, read(), "mapped: the same results bit for bit")

	release()
	require.NoError(t, c.DropCollectionProperties(ctx, milvusclient.NewDropCollectionPropertiesOption(coll, "mmap.enabled")))
	require.NoError(t, c.AlterIndexProperties(ctx, milvusclient.NewAlterIndexPropertiesOption(coll, "vec").WithProperty("mmap.enabled", true)))
	load()
	require.Equal(t, want, read(), "index-level mmap: the same results")
}
