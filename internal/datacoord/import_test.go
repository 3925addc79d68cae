package datacoord

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/storage"
)

// TestCommitImport: an import's segments and its job record land in one
// transaction, Flushed, and survive a restart; a segment that exists
// already is refused with nothing applied; while an import runs, garbage
// collection keeps the files above its marker, and removes them as orphans
// once the import ended without committing them.
func TestCommitImport(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	vch := "by-dev-rootcoord-dml_0_1v0"
	seg := func(id int64) catalog.SegmentInfo {
		return catalog.SegmentInfo{
			ID: id, CollectionID: coll, PartitionID: part, VChannel: vch, State: catalog.SegmentFlushed,
			Level: catalog.LevelL1, NumRows: 5, ImportJob: 9, SyncedOffset: -1,
			Binlogs: map[int64][]catalog.Binlog{testPK: {{LogID: id + 1, Entries: 5}}},
		}
	}
	require.NoError(t, e.c.CommitImport(e.ctx, []catalog.SegmentInfo{seg(500), seg(510)}, metastore.Put("import/jobs/9", []byte(`{"id":9}`))))
	require.Len(t, e.c.Segments(coll), 2)
	require.EqualValues(t, 10, e.c.rowCount(coll, nil))
	kvs, err := e.meta.Scan(e.ctx, "import/jobs/9")
	require.NoError(t, err)
	require.Len(t, kvs, 1)

	err = e.c.CommitImport(e.ctx, []catalog.SegmentInfo{seg(520), seg(500)}, metastore.Put("import/jobs/10", []byte(`{}`)))
	require.ErrorContains(t, err, "import segment 500 is not a new flushed segment")
	_, ok := segmentOf(t, e.c, 520)
	require.False(t, ok)
	kvs, err = e.meta.Scan(e.ctx, "import/jobs/10")
	require.NoError(t, err)
	require.Empty(t, kvs)

	e.open()
	info, ok := segmentOf(t, e.c, 510)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentFlushed, info.State)
	require.EqualValues(t, 9, info.ImportJob)

	// Files of a running import (IDs above its marker) outlive the orphan
	// retention until it ends.
	e.c.BeginImport(11, 600)
	running := storage.InsertLogKey("files", coll, part, 601, testPK, 602)
	e.put(running)
	e.advance(e.cfg.OrphanRetention + time.Minute)
	e.gc()
	require.Contains(t, e.keys(), running)
	e.c.EndImport(11)
	e.gc()
	require.NotContains(t, e.keys(), running)
}
