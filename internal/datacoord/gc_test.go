package datacoord

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	wallocal "github.com/strata-db/strata/internal/wal/local"
)

const (
	testPK  int64 = 100 // primary key field
	testVec int64 = 101 // vector field
)

// gcEnv is a coordinator over a real meta store, object store and WAL in a
// temporary directory, with an injected clock.
type gcEnv struct {
	t      *testing.T
	ctx    context.Context
	cfg    Config
	meta   *embedded.Store
	objs   *local.Store
	log    *wallocal.Log
	ids    *tso.Allocator
	writer *wal.Writer
	c      *Coordinator
	now    time.Time
	nextID int64
	// offset is the WAL offset of the last sync reported: each report
	// covers later messages than the one before, as a data node's do.
	offset int64
}

func newGCEnv(t *testing.T) *gcEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	meta, err := embedded.Open(filepath.Join(dir, "meta.db"), logger)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, meta.Close()) })
	objs, err := local.Open(filepath.Join(dir, "storage"))
	require.NoError(t, err)
	walCfg := wallocal.Defaults()
	walCfg.Dir = filepath.Join(dir, "wal")
	log, err := wallocal.Open(walCfg, logger)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, log.Close()) })
	ids, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.IDKey}, logger)
	require.NoError(t, err)
	clock, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.TimestampKey}, logger)
	require.NoError(t, err)
	e := &gcEnv{
		t: t, ctx: ctx, cfg: Defaults(), meta: meta, objs: objs, log: log, ids: ids,
		writer: wal.NewWriter(log, clock, wal.WriterConfig{}, logger), now: time.Now(), nextID: 1000,
	}
	e.open()
	return e
}

// open (re)creates the coordinator from the meta store, as after a restart.
func (e *gcEnv) open() {
	c, err := New(e.ctx, e.cfg, e.meta, e.ids, e.writer, e.log, nil, e.objs, slog.New(slog.DiscardHandler))
	require.NoError(e.t, err)
	c.now = func() time.Time { return e.now }
	e.c = c
}

func (e *gcEnv) advance(d time.Duration) { e.now = e.now.Add(d) }

func (e *gcEnv) id() int64 { e.nextID++; return e.nextID }

// nextOffset is the last message a new sync covers.
func (e *gcEnv) nextOffset() int64 { e.offset++; return e.offset }

func (e *gcEnv) put(key string) int64 {
	data := []byte("data of " + key)
	require.NoError(e.t, e.objs.Put(e.ctx, key, data))
	return int64(len(data))
}

func (e *gcEnv) gc() {
	e.t.Helper()
	require.NoError(e.t, e.c.collectGarbage(e.ctx))
}

// keys lists every object under the root.
func (e *gcEnv) keys() []string {
	objs, err := e.objs.List(e.ctx, "")
	require.NoError(e.t, err)
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

// collectionKeys lists the binlog keys of a collection.
func (e *gcEnv) collectionKeys(coll int64) []string {
	var out []string
	for _, k := range e.keys() {
		if pk, err := storage.ParseObjectKey("files", k); err == nil && pk.Kind != storage.KindIndexFile && pk.CollectionID == coll {
			out = append(out, k)
		}
	}
	return out
}

func (e *gcEnv) segmentRecords() map[int64]bool {
	kvs, err := e.meta.Scan(e.ctx, catalog.SegmentPrefix)
	require.NoError(e.t, err)
	out := map[int64]bool{}
	for _, kv := range kvs {
		var info catalog.SegmentInfo
		require.NoError(e.t, catalog.Unmarshal(kv.Value, &info))
		out[info.ID] = true
	}
	return out
}

// writeBatch writes what a data node writes for one sync of a segment
// (insert logs of fields 0, 1, pk and vector, a stats log, and with flush the
// compound stats log) and returns the report's part for it. Nothing is
// reported: a crash after writeBatch leaves orphans.
func (e *gcEnv) writeBatch(coll, part, seg int64, flush bool) (catalog.SegmentSync, []string) {
	ss := catalog.SegmentSync{
		SegmentID: seg, CollectionID: coll, PartitionID: part, Rows: 10, Flushed: flush,
		Binlogs: map[int64][]catalog.Binlog{}, Statslogs: map[int64][]catalog.Binlog{}, SyncedOffset: e.nextOffset(),
	}
	var keys []string
	for _, f := range []int64{0, 1, testPK, testVec} {
		log := e.id()
		k := storage.InsertLogKey("files", coll, part, seg, f, log)
		ss.Binlogs[f] = []catalog.Binlog{{LogID: log, Entries: 10, Size: e.put(k)}}
		keys = append(keys, k)
	}
	log := e.id()
	k := storage.StatsLogKey("files", coll, part, seg, testPK, log)
	ss.Statslogs[testPK] = []catalog.Binlog{{LogID: log, Entries: 10, Size: e.put(k)}}
	keys = append(keys, k)
	if flush {
		k := storage.CompoundStatsLogKey("files", coll, part, seg, testPK)
		ss.Statslogs[testPK] = append(ss.Statslogs[testPK], catalog.Binlog{LogID: storage.CompoundStatsLogID, Size: e.put(k)})
		keys = append(keys, k)
	}
	return ss, keys
}

// sync writes a segment's files and reports them, as a data node does. A
// segment the coordinator does not know is first recorded Growing, as
// AssignSegment would have.
func (e *gcEnv) sync(coll, part, seg int64, vchannel string, flush bool) []string {
	if _, ok := segmentOf(e.t, e.c, seg); !ok {
		info := catalog.SegmentInfo{
			ID: seg, CollectionID: coll, PartitionID: part, VChannel: vchannel,
			State: catalog.SegmentGrowing, Level: catalog.LevelL1, MaxRows: 1 << 20, SyncedOffset: -1, CreatedAt: e.now.UnixMilli(),
		}
		require.NoError(e.t, e.c.persist(e.ctx, []catalog.SegmentInfo{info}))
		e.c.apply([]catalog.SegmentInfo{info})
	}
	ss, keys := e.writeBatch(coll, part, seg, flush)
	require.NoError(e.t, e.c.Synced(e.ctx, catalog.SyncReport{
		VChannel: vchannel, Segments: []catalog.SegmentSync{ss},
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vchannel, Position: catalog.Position{Offset: ss.SyncedOffset + 1}, DeltaSyncedOffset: -1},
	}))
	return keys
}

// syncL0 writes a delta log as a new L0 segment and reports it.
func (e *gcEnv) syncL0(coll int64, vchannel string) (int64, string) {
	seg, log := e.id(), e.id()
	k := storage.DeltaLogKey("files", coll, -1, seg, log)
	size := e.put(k)
	off := e.nextOffset()
	l0 := &catalog.SegmentInfo{
		ID: seg, CollectionID: coll, PartitionID: -1, VChannel: vchannel, State: catalog.SegmentFlushed,
		Level: catalog.LevelL0, NumRows: 1, Deltalogs: []catalog.Binlog{{LogID: log, Entries: 1, Size: size}}, SyncedOffset: off,
	}
	require.NoError(e.t, e.c.Synced(e.ctx, catalog.SyncReport{
		VChannel: vchannel, L0: l0,
		Checkpoint: catalog.ChannelCheckpoint{VChannel: vchannel, Position: catalog.Position{Offset: off + 1}, DeltaSyncedOffset: off},
	}))
	return seg, k
}

func TestGCDroppedSegmentAfterRetention(t *testing.T) {
	e := newGCEnv(t)
	const coll, part, other = 1, 2, 3
	vch := "by-dev-rootcoord-dml_0_1v0"
	dropped := e.sync(coll, part, 10, vch, true)
	kept := e.sync(coll, other, 11, vch, true)
	var size int64
	info, ok := segmentOf(t, e.c, 10)
	require.True(t, ok)
	for _, f := range segmentFiles("files", &info) {
		size += f.size
	}
	require.Len(t, segmentFiles("files", &info), len(dropped))

	require.NoError(t, e.c.DropPartition(e.ctx, coll, part))
	e.gc()
	e.advance(e.cfg.DroppedRetention - time.Second)
	e.gc()
	require.Subset(t, e.keys(), dropped, "files are kept during the retention")
	require.True(t, e.segmentRecords()[10])

	e.advance(2 * time.Second)
	e.gc()
	require.ElementsMatch(t, kept, e.keys(), "the dropped segment's files are gone, the other's are not")
	require.False(t, e.segmentRecords()[10])
	require.True(t, e.segmentRecords()[11])
	_, ok = segmentOf(t, e.c, 10)
	require.False(t, ok)
	st := e.c.GCStats()
	require.Equal(t, int64(len(dropped)), st.FilesDeleted)
	require.Equal(t, size, st.BytesDeleted)
	require.Equal(t, int64(1), st.SegmentsDeleted)
	require.Zero(t, st.OrphansDeleted)
	require.Equal(t, int64(3), st.Runs)
	require.Equal(t, e.now, st.LastRun)

	// A second pass finds nothing to do.
	e.advance(e.cfg.OrphanRetention * 2)
	e.gc()
	require.ElementsMatch(t, kept, e.keys())
	st2 := e.c.GCStats()
	require.Equal(t, st.FilesDeleted, st2.FilesDeleted)
	require.Equal(t, st.SegmentsDeleted, st2.SegmentsDeleted)
	require.Equal(t, int64(4), st2.Runs)
}

func TestGCOrphans(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	vch := "by-dev-rootcoord-dml_0_1v0"
	referenced := e.sync(coll, part, 10, vch, true)
	_, l0Key := e.syncL0(coll, vch)
	referenced = append(referenced, l0Key)

	orphans := []string{
		storage.InsertLogKey("files", coll, part, 10, testVec, 999),    // known segment, unknown log
		storage.InsertLogKey("files", coll, part, 77, testVec, 998),    // unknown segment
		storage.StatsLogKey("files", coll, part, 77, testPK, 997),      // unknown segment's stats
		storage.CompoundStatsLogKey("files", coll, part, 78, testPK),   // compound of an unknown segment
		storage.DeltaLogKey("files", coll, -1, 79, 996),                // an L0 never reported
		storage.IndexFileKey("files", 55, 1, part, 10, "HNSW"),         // no such build
		storage.InsertLogKey("files", coll, part, 10, testPK+50, 1001), // field the record lacks
	}
	var orphanBytes int64
	for _, k := range orphans {
		orphanBytes += e.put(k)
	}
	unparsed := []string{
		"files/insert_log/notes.txt",
		"files/insert_log/1/2/10/100/5/6",
		"files/delta_log/1/2/010/5",
		"files/index_files/56/1/2/10",
	}
	for _, k := range unparsed {
		e.put(k)
	}
	outside := []string{"elsewhere/insert_log/1/2/3/4/5", "files/other/1"}
	for _, k := range outside {
		e.put(k)
	}

	e.gc()
	require.Subset(t, e.keys(), orphans, "young orphans are kept")
	require.Zero(t, e.c.GCStats().FilesDeleted)
	require.Equal(t, int64(len(unparsed)), e.c.GCStats().Unparsed)

	e.advance(e.cfg.OrphanRetention + time.Minute)
	e.gc()
	want := append(append(append([]string(nil), referenced...), unparsed...), outside...)
	require.ElementsMatch(t, want, e.keys())
	st := e.c.GCStats()
	require.Equal(t, int64(len(orphans)), st.OrphansDeleted)
	require.Equal(t, int64(len(orphans)), st.FilesDeleted)
	require.Equal(t, orphanBytes, st.BytesDeleted)
	require.Equal(t, int64(len(unparsed)), st.Unparsed)

	// Idempotent.
	e.gc()
	require.ElementsMatch(t, want, e.keys())
	require.Equal(t, st.FilesDeleted, e.c.GCStats().FilesDeleted)
}

var _ TempRemover = (*local.Store)(nil)

// TestGCTemporaryFiles: a process killed in the middle of a Put leaves the
// local store's hidden temporary file; GC deletes it once it is older than
// the orphan retention, as any other orphan.
func TestGCTemporaryFiles(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	vch := "by-dev-rootcoord-dml_0_1v0"
	referenced := e.sync(coll, part, 10, vch, true)
	leftover := func(key string) string {
		p := filepath.Join(e.objs.Root(), filepath.FromSlash(key))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("half written"), 0o600))
		mtime := e.now // the coordinator's clock
		require.NoError(t, os.Chtimes(p, mtime, mtime))
		return p
	}
	temps := []string{
		leftover("files/insert_log/1/2/77/101/.tmp-5-123"), // output of a compaction never committed
		leftover("files/stats_log/1/2/10/100/.tmp-1-456"),  // compound stats of a committed segment
		leftover("files/delta_log/1/2/10/.tmp-9-789"),      // an L0 compaction's delta log
	}
	outside := leftover("elsewhere/.tmp-x-1")

	e.gc()
	for _, p := range temps {
		require.FileExists(t, p, "a young temporary file may be a write in progress")
	}
	e.advance(e.cfg.OrphanRetention + time.Minute)
	e.gc()
	for _, p := range temps {
		require.NoFileExists(t, p)
	}
	require.FileExists(t, outside, "only below the storage root")
	require.ElementsMatch(t, referenced, e.keys())
	st := e.c.GCStats()
	require.Equal(t, int64(len(temps)), st.OrphansDeleted)
	require.Equal(t, int64(len(temps))*int64(len("half written")), st.BytesDeleted)
}

// TestGCUncommittedSync simulates data nodes that crash between writing a
// sync's files and reporting it: the files become orphans.
func TestGCUncommittedSync(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	vch := "by-dev-rootcoord-dml_0_1v0"
	committed := e.sync(coll, part, 10, vch, false)   // first sync, reported
	_, lost := e.writeBatch(coll, part, 10, false)    // second sync of the same segment, never reported
	_, lostSeg := e.writeBatch(coll, part, 11, false) // a new segment, never reported
	lost = append(lost, lostSeg...)

	e.advance(e.cfg.OrphanRetention / 2)
	e.gc()
	require.ElementsMatch(t, append(append([]string(nil), committed...), lost...), e.keys(), "a sync in flight is not touched")

	// The data node restarts and syncs the segment again: new files, reported.
	again := e.sync(coll, part, 10, vch, true)
	e.advance(e.cfg.OrphanRetention)
	e.gc()
	require.ElementsMatch(t, append(committed, again...), e.keys())
	require.Equal(t, int64(len(lost)), e.c.GCStats().OrphansDeleted)
}

func TestGCIndexFiles(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	vch := "by-dev-rootcoord-dml_0_1v0"
	seg1 := e.sync(coll, part, 10, vch, true)
	seg2 := e.sync(coll, part, 11, vch, true)
	require.NoError(t, e.c.CreateIndex(e.ctx, catalog.IndexInfo{
		CollectionID: coll, FieldID: testVec, Name: "v",
		Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
	}))

	// Build 1 finishes on its second attempt; its first attempt's file is stale.
	t1, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	stale := storage.IndexFileKey("files", t1.BuildID, t1.Version, t1.PartitionID, t1.SegmentID, "HNSW")
	e.put(stale)
	require.NoError(t, e.c.FinishIndexTask(e.ctx, t1.BuildID, t1.Version, nil, 0, fmt.Errorf("boom")))
	t1, _, ok, err = e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	finished := storage.IndexFileKey("files", t1.BuildID, t1.Version, t1.PartitionID, t1.SegmentID, "HNSW")
	size := e.put(finished)
	require.NoError(t, e.c.FinishIndexTask(e.ctx, t1.BuildID, t1.Version, []string{finished}, size, nil))

	// Build 2 is in progress: its file is written, its result not yet reported.
	t2, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.NotEqual(t, t1.BuildID, t2.BuildID)
	building := storage.IndexFileKey("files", t2.BuildID, t2.Version, t2.PartitionID, t2.SegmentID, "HNSW")
	e.put(building)

	e.advance(e.cfg.OrphanRetention + time.Minute)
	e.gc()
	want := append(append([]string{finished, building}, seg1...), seg2...)
	require.ElementsMatch(t, want, e.keys())
	require.Equal(t, int64(1), e.c.GCStats().OrphansDeleted)
}

func TestGCDropCollection(t *testing.T) {
	e := newGCEnv(t)
	const coll, other = 1, 2
	vchs := []string{"by-dev-rootcoord-dml_0_1v0", "by-dev-rootcoord-dml_1_1v1"}
	e.sync(coll, 5, 10, vchs[0], true)
	e.sync(coll, 5, 11, vchs[1], true)
	e.sync(coll, 6, 12, vchs[0], false)
	e.syncL0(coll, vchs[1])
	e.writeBatch(coll, 5, 13, true) // in flight when the collection is dropped
	kept := e.sync(other, 7, 20, "by-dev-rootcoord-dml_2_2v0", true)
	require.NoError(t, e.c.CreateIndex(e.ctx, catalog.IndexInfo{
		CollectionID: coll, FieldID: testVec, Name: "v",
		Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
	}))
	task, _, ok, err := e.c.ClaimIndexTask(e.ctx, "b", 0)
	require.NoError(t, err)
	require.True(t, ok)
	idxFile := storage.IndexFileKey("files", task.BuildID, task.Version, task.PartitionID, task.SegmentID, "HNSW")
	require.NoError(t, e.c.FinishIndexTask(e.ctx, task.BuildID, task.Version, []string{idxFile}, e.put(idxFile), nil))
	require.Len(t, e.c.IndexTasks(coll), 2)

	require.NoError(t, e.c.DropCollection(e.ctx, coll, vchs))
	for _, v := range vchs {
		_, ok := e.c.Checkpoint(v)
		require.False(t, ok, "checkpoint of %s", v)
	}
	e.advance(e.cfg.DroppedRetention + time.Minute)
	// Segments with index tasks wait until collectIndexGarbage removed them.
	e.gc()
	_, ok = segmentOf(t, e.c, task.SegmentID)
	require.True(t, ok)
	require.NoError(t, e.c.collectIndexGarbage(e.ctx))
	e.gc()

	require.Empty(t, e.collectionKeys(coll))
	require.ElementsMatch(t, kept, e.keys())
	require.Equal(t, map[int64]bool{20: true}, e.segmentRecords())
	require.Empty(t, e.c.Segments(coll))
	kvs, err := e.meta.Scan(e.ctx, catalog.IndexTaskPrefix)
	require.NoError(t, err)
	require.Empty(t, kvs)

	// After a restart nothing of the collection comes back.
	e.open()
	e.gc()
	require.ElementsMatch(t, kept, e.keys())
	require.Equal(t, map[int64]bool{20: true}, e.segmentRecords())
}

// TestGCCrashBetweenFilesAndRecord: a pass that deleted a dropped segment's
// files (all or some) but not its record is finished by the next pass, also
// after a restart.
func TestGCCrashBetweenFilesAndRecord(t *testing.T) {
	for _, all := range []bool{true, false} {
		t.Run(fmt.Sprintf("all files deleted=%v", all), func(t *testing.T) {
			e := newGCEnv(t)
			vch := "by-dev-rootcoord-dml_0_1v0"
			e.sync(1, 2, 10, vch, true)
			require.NoError(t, e.c.DropPartition(e.ctx, 1, 2))
			info, ok := segmentOf(t, e.c, 10)
			require.True(t, ok)
			files := segmentFiles("files", &info)
			if !all {
				files = files[:len(files)/2]
			}
			for _, f := range files {
				require.NoError(t, e.objs.Delete(e.ctx, f.key))
			}
			e.open() // the crash
			_, ok = segmentOf(t, e.c, 10)
			require.True(t, ok)
			e.advance(e.cfg.DroppedRetention + time.Minute)
			e.gc()
			require.Empty(t, e.keys())
			require.Empty(t, e.segmentRecords())
			e.gc()
			require.Empty(t, e.keys())
		})
	}
}

func TestGCInterval(t *testing.T) {
	e := newGCEnv(t)
	e.c.maybeCollectGarbage(e.ctx)
	require.Equal(t, int64(1), e.c.GCStats().Runs)
	e.advance(e.cfg.GCInterval - time.Second)
	e.c.maybeCollectGarbage(e.ctx)
	require.Equal(t, int64(1), e.c.GCStats().Runs)
	e.advance(time.Second)
	e.c.maybeCollectGarbage(e.ctx)
	require.Equal(t, int64(2), e.c.GCStats().Runs)
}

func TestGCConfigValidate(t *testing.T) {
	require.NoError(t, Defaults().Validate())
	cases := map[string]func(*Config){
		"gc interval":       func(c *Config) { c.GCInterval = 0 },
		"dropped retention": func(c *Config) { c.DroppedRetention = -time.Second },
		"orphan retention":  func(c *Config) { c.OrphanRetention = 0 },
		"empty root":        func(c *Config) { c.RootPath = "" },
		"bad root":          func(c *Config) { c.RootPath = "a//b" },
	}
	for name, tweak := range cases {
		t.Run(name, func(t *testing.T) {
			c := Defaults()
			tweak(&c)
			require.Error(t, c.Validate())
		})
	}
}

func TestSegmentFilesKeys(t *testing.T) {
	info := catalog.SegmentInfo{
		ID: 3, CollectionID: 1, PartitionID: 2,
		Binlogs:   map[int64][]catalog.Binlog{101: {{LogID: 8}}, 0: {{LogID: 7}}},
		Statslogs: map[int64][]catalog.Binlog{100: {{LogID: 9}, {LogID: 1}}},
		Deltalogs: []catalog.Binlog{{LogID: 10}},
	}
	var keys []string
	for _, f := range segmentFiles("files", &info) {
		keys = append(keys, f.key)
	}
	require.Equal(t, []string{
		"files/insert_log/1/2/3/0/7", "files/insert_log/1/2/3/101/8",
		"files/stats_log/1/2/3/100/9", "files/stats_log/1/2/3/100/1",
		"files/delta_log/1/2/3/10",
	}, keys)
	require.True(t, strings.HasPrefix(keys[0], storage.KindPrefix("files", storage.KindInsertLog)))
}

// TestReplayedFlushOfCompactedSegment: a data node that restarts replays
// the WAL from its checkpoint, which may lie before the Flush message of a
// segment that compaction has since dropped and garbage collection removed.
// Its report (no rows, Flushed) must not bring the segment back, neither
// while the Dropped record is kept nor after it is gone.
func TestReplayedFlushOfCompactedSegment(t *testing.T) {
	const coll, part = mergeColl, mergePart
	e, vch, a, _, _ := mergeEnv(t)
	plan, ok, err := e.c.ClaimCompaction(e.ctx, "executor", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	id, err := e.ids.Allocate(e.ctx, 2)
	require.NoError(t, err)
	out, logID := int64(id), int64(id)+1
	key := storage.InsertLogKey("files", coll, part, out, testVec, logID)
	output := catalog.SegmentInfo{
		ID: out, CollectionID: coll, PartitionID: part, VChannel: vch, State: catalog.SegmentFlushed,
		Level: catalog.LevelL1, NumRows: 20, Binlogs: map[int64][]catalog.Binlog{testVec: {{LogID: logID, Entries: 20, Size: e.put(key)}}},
	}
	require.NoError(t, e.c.CompleteCompaction(e.ctx, catalog.CompactionResult{
		PlanID: plan.ID, Attempt: plan.Attempt,
		Outputs: []catalog.SegmentInfo{output},
	}, nil))
	info, ok := segmentOf(t, e.c, a)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentDropped, info.State)

	// What a restarted data node reports for a's replayed Flush message.
	replay := func() {
		require.NoError(t, e.c.Synced(e.ctx, catalog.SyncReport{
			VChannel: vch,
			Segments: []catalog.SegmentSync{{
				SegmentID: a, CollectionID: coll, Flushed: true,
				Binlogs: map[int64][]catalog.Binlog{}, Statslogs: map[int64][]catalog.Binlog{}, SyncedOffset: 5,
			}},
			Checkpoint: catalog.ChannelCheckpoint{VChannel: vch, Position: catalog.Position{Offset: 6}, DeltaSyncedOffset: -1},
		}))
	}
	live := func() []int64 {
		var ids []int64
		for _, s := range e.c.Segments(coll) {
			ids = append(ids, s.ID)
		}
		return ids
	}
	replay()
	info, ok = segmentOf(t, e.c, a)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentDropped, info.State, "a Dropped segment stays Dropped")
	require.Equal(t, []int64{out}, live())

	e.advance(e.cfg.DroppedRetention + time.Second)
	e.gc()
	require.False(t, e.segmentRecords()[a])
	replay()
	_, ok = segmentOf(t, e.c, a)
	require.False(t, ok, "a garbage-collected segment does not come back")
	require.False(t, e.segmentRecords()[a], "nor is it persisted")
	require.Equal(t, []int64{out}, live())
	e.open()
	require.Equal(t, []int64{out}, live(), "after a restart either")
	cp, ok := e.c.Checkpoint(vch)
	require.True(t, ok)
	require.EqualValues(t, 6, cp.Position.Offset, "the replay's checkpoint is recorded")
}

// TestDroppedSignals: the channel Dropped returns is closed by a drop of a
// partition, of an index and of a collection, each once the catalog says
// so, and a new one is handed out for the next drop; a drop that drops
// nothing signals nothing.
func TestDroppedSignals(t *testing.T) {
	e := newGCEnv(t)
	const coll, part, other = 1, 2, 3
	vch := "by-dev-rootcoord-dml_0_1v0"
	e.sync(coll, part, 10, vch, true)
	e.sync(coll, other, 11, vch, true)
	require.NoError(t, e.c.CreateIndex(e.ctx, catalog.IndexInfo{
		CollectionID: coll, FieldID: testVec, Name: "v",
		Params: map[string]string{"index_type": "HNSW", "metric_type": "L2"},
	}))
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}

	ch := e.c.Dropped()
	require.NoError(t, e.c.DropPartition(e.ctx, coll, 99))
	require.False(t, closed(ch), "nothing dropped")
	require.NoError(t, e.c.DropPartition(e.ctx, coll, part))
	require.True(t, closed(ch))
	seg, ok, err := e.c.Segment(e.ctx, 10)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, catalog.SegmentDropped, seg.State, "the catalog says so before the signal")

	ch = e.c.Dropped()
	require.False(t, closed(ch), "a new channel for the next drop")
	require.NoError(t, e.c.DropIndex(e.ctx, coll, "v"))
	require.True(t, closed(ch))
	idx, err := e.c.Indexes(e.ctx, coll)
	require.NoError(t, err)
	require.Empty(t, idx)

	ch = e.c.Dropped()
	require.NoError(t, e.c.DropCollection(e.ctx, coll, []string{vch}))
	require.True(t, closed(ch))
	require.Empty(t, e.c.Segments(coll))
}

// TestWaitDropped: WaitDropped answers at once when the drop generation
// differs from the caller's, waits for the next drop otherwise, gives up
// after its wait, and ends with its context.
func TestWaitDropped(t *testing.T) {
	e := newGCEnv(t)
	const coll, part = 1, 2
	e.sync(coll, part, 10, "by-dev-rootcoord-dml_0_1v0", true)

	gen, err := e.c.WaitDropped(e.ctx, 0, 0)
	require.NoError(t, err)
	require.Zero(t, gen, "no drop yet")
	gen, err = e.c.WaitDropped(e.ctx, 0, 10*time.Millisecond)
	require.NoError(t, err)
	require.Zero(t, gen, "the wait passed")

	got := make(chan uint64, 1)
	go func() {
		g, err := e.c.WaitDropped(e.ctx, 0, time.Minute)
		assert.NoError(t, err)
		got <- g
	}()
	require.NoError(t, e.c.DropPartition(e.ctx, coll, part))
	select {
	case g := <-got:
		require.EqualValues(t, 1, g)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitDropped did not answer the drop")
	}
	gen, err = e.c.WaitDropped(e.ctx, 0, time.Minute)
	require.NoError(t, err)
	require.EqualValues(t, 1, gen, "a generation the caller has not seen answers at once")

	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	_, err = e.c.WaitDropped(ctx, 1, time.Minute)
	require.ErrorIs(t, err, context.Canceled)
}
