package e2e

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/storage"
)

// storedKeys parses every object key under root, the server's storageDir.
func storedKeys(t *testing.T, root string) []storage.ObjectKey {
	t.Helper()
	var out []storage.ObjectKey
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // garbage collection removed it while we walked
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		k, err := storage.ParseObjectKey(storage.DefaultRootPath, filepath.ToSlash(rel))
		if err == nil { // temporary files of a Put in progress do not parse
			out = append(out, k)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestGCFreesDroppedCollectionAndPartition(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, func(cfg *app.Config) {
		cfg.DataCoord.GCInterval = 100 * time.Millisecond
		cfg.DataCoord.DroppedRetention = time.Millisecond
	})
	c := s.client(t)
	ctx := ctxT(t)
	rng := rand.New(rand.NewPCG(5, 5))

	// Collection "gone": rows, deletes (an L0 delta log) and an HNSW index.
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("gone", moviesSchema("gone"))))
	_, err := c.Insert(ctx, insertOption("gone", genMovies(0, 500, rng)))
	require.NoError(t, err)
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption("gone").WithInt64IDs("id", []int64{1, 2, 3}))
	require.NoError(t, err)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption("gone"))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption("gone", "vector", index.NewHNSWIndex(entity.L2, 8, 32)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))

	// Collection "kept": rows in the default partition and in partition "p".
	keptSchema := entity.NewSchema().WithName("kept").
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vector").WithDataType(entity.FieldTypeFloatVector).WithDim(dim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption("kept", keptSchema)))
	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("kept", "p")))
	insertKept := func(part string, ms []movie) {
		ids := make([]int64, len(ms))
		vecs := make([][]float32, len(ms))
		for i, m := range ms {
			ids[i], vecs[i] = m.id, m.vec
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("kept").WithInt64Column("id", ids).
			WithFloatVectorColumn("vector", dim, vecs).WithPartition(part))
		require.NoError(t, err)
	}
	insertKept("_default", genMovies(0, 300, rng))
	insertKept("p", genMovies(1000, 300, rng))
	ft, err = c.Flush(ctx, milvusclient.NewFlushOption("kept"))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))

	gone, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("gone"))
	require.NoError(t, err)
	kept, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("kept"))
	require.NoError(t, err)
	count := func(coll int64) (logs, delta int, parts map[int64]bool, indexFiles int) {
		parts = map[int64]bool{}
		for _, k := range storedKeys(t, s.storageDir(t)) {
			switch {
			case k.Kind == storage.KindIndexFile:
				indexFiles++
			case k.CollectionID != coll:
			case k.Kind == storage.KindDeltaLog:
				delta++
			default:
				logs++
				parts[k.PartitionID] = true
			}
		}
		return logs, delta, parts, indexFiles
	}
	logs, delta, _, indexFiles := count(gone.ID)
	require.NotZero(t, logs)
	require.NotZero(t, delta)
	require.NotZero(t, indexFiles)
	keptLogs, _, keptParts, _ := count(kept.ID)
	require.NotZero(t, keptLogs)
	require.Len(t, keptParts, 2)

	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption("gone")))
	waitFor(t, "the dropped collection's files are deleted", func() bool {
		logs, delta, _, indexFiles := count(gone.ID)
		return logs == 0 && delta == 0 && indexFiles == 0
	})

	require.NoError(t, c.DropPartition(ctx, milvusclient.NewDropPartitionOption("kept", "p")))
	waitFor(t, "the dropped partition's files are deleted", func() bool {
		_, _, parts, _ := count(kept.ID)
		return len(parts) == 1
	})
	logs, _, _, _ = count(kept.ID)
	require.NotZero(t, logs, "the default partition's files stay")

	// What is left is still readable.
	indexAndLoad(ctx, t, c, "kept", entity.L2)
	rs, err := c.Query(ctx, milvusclient.NewQueryOption("kept").WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, 300, n)
}
