package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage"
)

// The compaction crash test runs a server with small segments and
// aggressive compaction and garbage collection (--config), drives it with
// the crash test's writers (insert, delete, upsert on disjoint key ranges),
// triggers manual compactions and kills the process with SIGKILL at random
// moments while they run. After every restart each acknowledged row must be
// present with its last value or deleted, no key may appear twice, and
// count(*) must agree (verify). At the end compaction and garbage collection
// run to completion: the physical rows equal the live ones, no file is left
// that no segment record references (beyond the orphan retention), disk use
// went down, and the data is still intact after one more restart.

const (
	ccOrphanRetention = 3 * time.Second
	ccGCInterval      = 300 * time.Millisecond
)

// compactionCrashConfig: growing segments seal at 256 KiB (~2,000 rows of
// the crash schema), every sealed segment is "small" and merged in groups
// of two, L0 segments are compacted at once, and any delete marks a segment
// for rewriting. Files of dropped segments go after 1 s, orphans after 3 s.
var compactionCrashConfig = fmt.Sprintf(`{
  "dataCoord": {
    "segmentMaxSize": 1048576, "sealProportion": 0.25, "maxIdle": "2s", "checkInterval": "100ms",
    "gcInterval": %q, "droppedRetention": "1s", "orphanRetention": %q,
    "compaction": {"l0Count": 1, "l0MaxAge": "1s", "smallProportion": 0.5, "minSmallSegments": 2, "deletedRatio": 0.0001}
  },
  "dataNode": {"segmentBufferSize": 262144, "syncPeriod": "2s"},
  "wal": {"segmentSize": 1048576}
}`, ccGCInterval.String(), ccOrphanRetention.String())

func writeTestConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "strata.json")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// dirBytes sums the sizes of the regular files below dir (temporary files included).
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	require.NoError(t, err)
	return n
}

// liveStoredKeys is storedKeys for a running server: files and directories
// that vanish during the walk (garbage collection) are skipped.
func liveStoredKeys(t *testing.T, dir string) []storage.ObjectKey {
	t.Helper()
	root := filepath.Join(dir, "storage")
	var out []storage.ObjectKey
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if k, err := storage.ParseObjectKey(storage.DefaultRootPath, filepath.ToSlash(rel)); err == nil {
			out = append(out, k)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// compactionState asks for a compaction's state; Executing also covers
// plans not started yet.
func compactionState(ctx context.Context, svc milvuspb.MilvusServiceClient, id int64) (*milvuspb.GetCompactionStateResponse, error) {
	return svc.GetCompactionState(ctx, &milvuspb.GetCompactionStateRequest{CompactionID: id})
}

// persistentSegments returns the collection's segments that are not dropped.
func persistentSegments(ctx context.Context, t *testing.T, svc milvuspb.MilvusServiceClient, coll string) []*milvuspb.PersistentSegmentInfo {
	t.Helper()
	resp, err := svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{CollectionName: coll})
	require.NoError(t, err)
	require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	return resp.GetInfos()
}

// waitUncommittedOutput polls until the storage holds files of a segment
// that neither existed on disk when it started nor is a live segment now:
// a compaction output written but not committed. It gives up after limit.
func waitUncommittedOutput(ctx context.Context, t *testing.T, dir string, svc milvuspb.MilvusServiceClient, limit time.Duration) bool {
	t.Helper()
	old := map[int64]bool{}
	for _, k := range liveStoredKeys(t, dir) {
		old[k.SegmentID] = true
	}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		keys := liveStoredKeys(t, dir) // before the records: a commit in between shows as live
		live := map[int64]bool{}
		for _, s := range persistentSegments(ctx, t, svc, crashColl) {
			live[s.GetSegmentID()] = true
		}
		for _, k := range keys {
			if !old[k.SegmentID] && !live[k.SegmentID] {
				return true
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

func TestCompactionCrash(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := writeTestConfig(t, compactionCrashConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	ws := make([]*crashWriter, crashWriters)
	for g := range ws {
		ws[g] = newCrashWriter(g)
	}
	args := []string{"--config", cfg, "--log-level", "debug"}
	p := startProc(t, bin, dir, args...)
	c := p.client(t)
	createCrashCollection(ctx, t, c, 2)

	rounds := 8
	if testing.Short() {
		rounds = 2
	}
	outer := t
	midCompaction, outputSeen := 0, 0
	prevStderr, served := "", ""
	replayedAway := 0 // replayed inserts of segments flushed or dropped since the view was taken
	for r := range rounds {
		t.Run(fmt.Sprintf("round %d", r), func(t *testing.T) {
			var killed atomic.Bool
			wctx, wcancel := context.WithCancel(ctx)
			defer wcancel()
			var wg sync.WaitGroup
			for _, w := range ws {
				wg.Go(func() { w.run(wctx, t, c, &killed, false) })
			}
			// Let rows accumulate, flush them into sealed segments and L0
			// delta logs, then compact while the writers go on.
			time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(crashColl))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
			svc := c.GetService()
			resp, err := svc.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: crashColl})
			require.NoError(t, err)
			require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
			if r%2 == 0 {
				// A random moment, most often soon after the trigger.
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond / time.Duration(1+rng.IntN(8)))
			} else {
				// The moment a compaction output not committed yet is on disk.
				if waitUncommittedOutput(ctx, t, dir, svc, 5*time.Second) {
					outputSeen++
				}
			}
			st, err := compactionState(ctx, svc, resp.GetCompactionID())
			require.NoError(t, err)
			killed.Store(true)
			p.kill(t)
			wcancel()
			wg.Wait()
			done := strings.Count(p.stderr.String(), "compaction done")
			if st.GetState() == commonpb.CompactionState_Executing {
				midCompaction++
			}
			t.Logf("killed with the manual compaction %s (%d plans executing, %d completed); %d compactions committed by this process",
				st.GetState(), st.GetExecutingPlanNo(), st.GetCompletedPlanNo(), done)

			prevStderr = p.stderr.String()
			p = startProc(outer, bin, dir, args...)
			c = p.client(outer)
			waitLoaded(ctx, t, c)
			served = querySegments(ctx, c)
			verify(t, ws, observeTracing(ctx, t, c, ws), false)
			replayedAway += strings.Count(p.stderr.String(), "replaying inserts of a segment not growing")
		})
		if t.Failed() {
			t.Logf("segments served just before the failing check: %s; now: %s", served, querySegments(ctx, c))
			t.Logf("stderr of the killed server:\n%s\nstderr of the restarted server:\n%s", prevStderr, p.stderr.String())
			dups, err := duplicateKeys(ctx, c, ws, 8)
			t.Logf("keys counted twice: %v (%v)", dups, err)
			rows, err := readServed(ctx, c, ws)
			bad := mismatchedKeys(rows, ws, 8)
			t.Logf("keys present or absent against the acknowledged state: %v (%v)", bad, err)
			p.kill(t)
			logSegmentRecords(t, dir)
			keyHistory(t, dir, append(dups, bad...))
			return
		}
	}
	t.Logf("%d of %d kills landed while the manual compaction was executing, %d with an uncommitted compaction output on disk; "+
		"after the restarts, query nodes replayed inserts of %d segments flushed or dropped since their view was taken",
		midCompaction, rounds, outputSeen, replayedAway)

	// Compact to the end: seal what is growing, apply every delete, merge.
	svc := c.GetService()
	storageDir := filepath.Join(dir, "storage")
	before := dirBytes(t, storageDir)
	got := observe(ctx, t, c, ws)
	deadline := time.Now().Add(2 * time.Minute)
	finalStart := time.Now()
	for iter := 1; ; iter++ {
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(crashColl))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		resp, err := svc.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: crashColl})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		for {
			st, err := compactionState(ctx, svc, resp.GetCompactionID())
			require.NoError(t, err)
			if st.GetState() == commonpb.CompactionState_Completed {
				break
			}
			require.True(t, time.Now().Before(deadline), "manual compaction did not complete")
			time.Sleep(50 * time.Millisecond)
		}
		var rows int64
		l0 := 0
		for _, s := range persistentSegments(ctx, t, svc, crashColl) {
			if s.GetLevel() == commonpb.SegmentLevel_L0 {
				l0++
			}
			rows += s.GetNumRows()
		}
		if l0 == 0 && rows == int64(len(got)) {
			t.Logf("compaction converged after %d manual compactions (%v)", iter, time.Since(finalStart).Round(time.Millisecond))
			break
		}
		require.True(t, time.Now().Before(deadline), "compaction did not converge: %d L0 segments, %d physical rows, %d live", l0, rows, len(got))
		time.Sleep(200 * time.Millisecond)
	}
	verify(t, ws, observe(ctx, t, c, ws), false)

	// Garbage collection: files of segments that are not live go once their
	// retention has passed; this process started after the last kill, so
	// orphans of the kills are older than its start.
	started := time.Now()
	waitFor := func() bool {
		live := map[int64]bool{}
		for _, s := range persistentSegments(ctx, t, svc, crashColl) {
			live[s.GetSegmentID()] = true
		}
		for _, k := range liveStoredKeys(t, dir) {
			if !live[k.SegmentID] {
				return false
			}
		}
		return time.Since(started) > ccOrphanRetention+3*ccGCInterval
	}
	for !waitFor() {
		require.True(t, time.Now().Before(deadline), "files of dropped segments were not collected")
		time.Sleep(100 * time.Millisecond)
	}
	after := dirBytes(t, storageDir)
	t.Logf("storage: %d bytes before the final compaction and GC, %d after; %d live rows", before, after, len(got))
	// Automatic compaction and GC may already have done the work before the
	// final round; disk use must not have grown, and the check below proves
	// that nothing unreferenced is left.
	require.LessOrEqual(t, after, before, "compaction and GC did not grow disk use")

	// Every file is referenced by a live segment record, unless younger than
	// the orphan retention (a compaction or sync the SIGTERM cut short).
	require.Equal(t, 0, p.term(t), "stderr:\n%s", p.stderr.String())
	checkNoOrphans(t, dir, time.Now().Add(-ccOrphanRetention))

	p = startProc(t, bin, dir, args...)
	c = p.client(t)
	waitLoaded(ctx, t, c)
	verify(t, ws, observe(ctx, t, c, ws), false)
}

// checkNoOrphans reads the meta store of a stopped server and fails on any
// object older than cutoff that no segment record lists, on any record
// left Dropped, and on temporary files of interrupted writes.
func checkNoOrphans(t *testing.T, dir string, cutoff time.Time) {
	t.Helper()
	root := storage.DefaultRootPath
	refs := map[string]bool{}
	records := segmentRecords(t, dir)
	for _, s := range records {
		if s.State == catalog.SegmentDropped && time.UnixMilli(s.DroppedAt).Before(cutoff) {
			t.Errorf("segment %d was dropped at %s and is still recorded", s.ID, time.UnixMilli(s.DroppedAt))
		}
		for f, logs := range s.Binlogs {
			for _, l := range logs {
				refs[storage.InsertLogKey(root, s.CollectionID, s.PartitionID, s.ID, f, l.LogID)] = true
			}
		}
		for f, logs := range s.Statslogs {
			for _, l := range logs {
				refs[storage.StatsLogKey(root, s.CollectionID, s.PartitionID, s.ID, f, l.LogID)] = true
			}
		}
		for _, l := range s.Deltalogs {
			refs[storage.DeltaLogKey(root, s.CollectionID, s.PartitionID, s.ID, l.LogID)] = true
		}
	}
	storageDir := filepath.Join(dir, "storage")
	orphans, temps := 0, 0
	err := filepath.WalkDir(storageDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(storageDir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			temps++
			t.Errorf("temporary file of an interrupted write left behind: %s (%d bytes)", key, fi.Size())
			return nil
		}
		if !refs[key] && fi.ModTime().Before(cutoff) {
			orphans++
			t.Errorf("orphan older than the retention: %s (%d bytes, modified %s)", key, fi.Size(), fi.ModTime())
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d segment records, %d referenced files, %d orphans, %d temporary files", len(records), len(refs), orphans, temps)
}

// logSegmentRecords logs every segment record of the stopped server's meta
// store, so that a failure shows which segments existed, in which state
// and level, with how many rows and files, when a row went missing.
func logSegmentRecords(t *testing.T, dir string) {
	t.Helper()
	recs := segmentRecords(t, dir)
	ids := make([]int64, 0, len(recs))
	for id := range recs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := recs[id]
		nlogs := 0
		for _, l := range r.Binlogs {
			nlogs += len(l)
		}
		t.Logf("segment %d: %s L%d part %d vch %s rows %d binlogs %d deltalogs %d compactedFrom %v syncedOffset %d",
			r.ID, r.State, r.Level, r.PartitionID, r.VChannel, r.NumRows, nlogs, len(r.Deltalogs), r.CompactedFrom, r.SyncedOffset)
	}
}
