package e2e

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/metastore/etcd"
)

// TestReplayedFlushOfCompactedSegment: a restarted data node replays the
// WAL from its checkpoint, held back by a segment still buffered, past the
// Flush messages of segments that compaction merged and garbage collection
// removed since. They must not come back as (empty) Flushed segments.
func TestReplayedFlushOfCompactedSegment(t *testing.T) {
	dir := t.TempDir()
	tweak := func(cfg *app.Config) {
		// Segments of 100 four-dimensional rows fill up (sealed by size) at
		// the second batch; they stay small (merged by compaction).
		cfg.DataCoord.SegmentMaxSize = 40000
		cfg.DataCoord.Compaction.MinSmallSegments = 2
		cfg.DataCoord.GCInterval = 100 * time.Millisecond
		cfg.DataCoord.DroppedRetention = time.Millisecond
	}
	s := startServer(t, dir, tweak)
	c := s.client(t)
	ctx := ctxT(t)
	svc := c.GetService()
	const coll = "replay"
	schema := entity.NewSchema().WithName(coll).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("v").WithDataType(entity.FieldTypeFloatVector).WithDim(4))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, schema).WithShardNum(1)))
	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption(coll, "p")))
	insert := func(part string, from, n int) {
		ids := make([]int64, n)
		vecs := make([][]float32, n)
		for i := range ids {
			ids[i], vecs[i] = int64(from+i), []float32{float32(i), 1, 2, 3}
		}
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption(coll).WithInt64Column("id", ids).
			WithFloatVectorColumn("v", 4, vecs).WithPartition(part))
		require.NoError(t, err)
	}
	segments := func() map[int64]commonpb.SegmentState {
		resp, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		out := map[int64]commonpb.SegmentState{}
		for _, si := range resp.GetInfos() {
			out[si.GetSegmentID()] = si.GetState()
		}
		return out
	}

	// A row that stays buffered in the data node holds the checkpoint back
	// between the first segment's rows and its Flush message: a replay
	// from there reads the Flush but not the rows (which would have it
	// skipped as unknown).
	insert("_default", 0, 100)
	insert("p", 1_000_000, 1)
	for b := 1; b < 3; b++ {
		insert("_default", b*100, 100)
	}
	var first map[int64]commonpb.SegmentState
	waitFor(t, "two segments flushed by size", func() bool {
		first = segments()
		n := 0
		for _, st := range first {
			if st == commonpb.SegmentState_Flushed {
				n++
			}
		}
		return n >= 2
	})
	var merged []int64
	for id, st := range first {
		if st == commonpb.SegmentState_Flushed {
			merged = append(merged, id)
		}
	}
	waitFor(t, "compaction merged the flushed segments", func() bool {
		now := segments()
		for _, id := range merged {
			if _, ok := now[id]; ok {
				return false
			}
		}
		return true
	})
	waitFor(t, "garbage collection removed their files", func() bool {
		for _, k := range storedKeys(t, s.storageDir(t)) {
			for _, id := range merged {
				if k.SegmentID == id {
					return false
				}
			}
		}
		return true
	})
	s.stop()
	before := s.segmentRecords(t)
	for _, id := range merged {
		require.NotContains(t, before, id, "the merged segments' records are collected")
	}

	// The restarted data node replays their Flush messages.
	s = startServer(t, dir, tweak)
	c = s.client(t)
	svc = c.GetService()
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx)) // the replay has passed the old Flush messages
	now := segments()
	for _, id := range merged {
		require.NotContains(t, now, id, "a compacted segment does not come back")
	}
	s.stop()
	after := s.segmentRecords(t)
	for _, id := range merged {
		require.NotContains(t, after, id, "nor is its record written again")
	}
}

// segmentRecords reads the segment records of a stopped standalone
// server's meta store (dir/meta.db).
func segmentRecords(t *testing.T, dir string) map[int64]catalog.SegmentInfo {
	t.Helper()
	meta, err := embedded.Open(filepath.Join(dir, "meta.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, meta.Close()) }()
	return scanSegments(t, meta)
}

// segmentRecords reads the segment records of the stopped server's meta
// store: a standalone's meta.db, or a cluster's etcd root.
func (s *server) segmentRecords(t *testing.T) map[int64]catalog.SegmentInfo {
	t.Helper()
	if s.namespace == "" {
		return segmentRecords(t, s.dir)
	}
	var cfg app.Config
	target.config(t, &cfg, s.namespace)
	meta, err := etcd.Open(context.Background(), cfg.Engines.Meta.Etcd, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, meta.Close()) }()
	return scanSegments(t, meta)
}

// scanSegments reads the segment records of meta.
func scanSegments(t *testing.T, meta metastore.KV) map[int64]catalog.SegmentInfo {
	t.Helper()
	kvs, err := meta.Scan(context.Background(), catalog.SegmentPrefix)
	require.NoError(t, err)
	out := map[int64]catalog.SegmentInfo{}
	for _, kv := range kvs {
		var info catalog.SegmentInfo
		require.NoError(t, catalog.Unmarshal(kv.Value, &info))
		out[info.ID] = info
	}
	return out
}
