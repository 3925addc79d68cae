//go:build churn

package e2e

// The churn run (build tag churn) measures how disk use follows live data
// under a write-heavy churn:
//
//	go test -tags churn -run TestChurn -timeout 60m -v ./e2e/ -churn.duration 10m
//
// It starts a server subprocess (--config: defaults with short GC
// retention, or -churn.config FILE), and -churn.writers writers each send,
// at full speed and in a loop, an insert of 1,000 new rows, a delete of 300
// live rows (30% of what is inserted) and an upsert of 200 live rows. Every
// -churn.sample it samples the data directory (storage/, wal/, meta.db) and
// the live data (live rows × row bytes). When the time is up it measures
// recall@10 against brute force, lets automatic compaction and GC run for
// -churn.settle, then flushes and compacts manually until no L0 segment and
// no deleted row is left, waits for GC, and measures again. The report is
// logged as a table.

import (
	"container/heap"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

var (
	churnDuration = flag.Duration("churn.duration", 10*time.Minute, "how long the writers churn")
	churnSample   = flag.Duration("churn.sample", 15*time.Second, "how often disk use is sampled")
	churnSettle   = flag.Duration("churn.settle", 90*time.Second, "how long automatic compaction and GC run after the writers stop")
	churnWriters  = flag.Int("churn.writers", 4, "concurrent writers")
	churnConfig   = flag.String("churn.config", "", "server --config file (default: built in, defaults with short GC retention)")
	churnProfile  = flag.String("churn.heapprofile", "", "write the server's heap profile (after a forced GC) at the end of the churn to this file")
)

const (
	churnColl     = "churn"
	churnDim      = 32
	churnRowBytes = 8 + 4*churnDim // id + vector
	churnInsert   = 1000
	churnDelete   = 300
	churnUpsert   = 200
	churnKeySpace = 1 << 40
	churnQueries  = 20
	churnTopK     = 10
)

// churnDefaultConfig: the defaults, but dropped segments' files go after 10 s
// and orphans after 1 min, so that GC finishes within the run.
const churnDefaultConfig = `{"dataCoord": {"gcInterval": "5s", "droppedRetention": "10s", "orphanRetention": "1m"}, "pprof": true}`

// churnVector is the vector of a key at a version.
func churnVector(key int64, ver int32, out []float32) {
	r := rand.New(rand.NewPCG(uint64(key), uint64(ver)))
	for i := range out {
		out[i] = r.Float32()
	}
}

// churnWriter owns keys g*churnKeySpace + i; ver[i] is the version of key i
// (-1 = deleted). Only its goroutine writes ver until the writers stop.
type churnWriter struct {
	g    int
	rng  *rand.Rand
	ver  []int32
	live atomic.Int64
	ops  atomic.Int64
}

func (w *churnWriter) key(i int) int64 { return int64(w.g)*churnKeySpace + int64(i) }

// pickLive returns up to n distinct live key indexes.
func (w *churnWriter) pickLive(n int) []int {
	seen := map[int]bool{}
	var out []int
	for tries := 0; len(out) < n && tries < 4*n && len(w.ver) > 0; tries++ {
		i := w.rng.IntN(len(w.ver))
		if w.ver[i] >= 0 && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

func (w *churnWriter) rows(idx []int, vers []int32) writeOption {
	ids := make([]int64, len(idx))
	vecs := make([][]float32, len(idx))
	for j, i := range idx {
		ids[j] = w.key(i)
		vecs[j] = make([]float32, churnDim)
		churnVector(ids[j], vers[j], vecs[j])
	}
	return milvusclient.NewColumnBasedInsertOption(churnColl).WithInt64Column("id", ids).
		WithFloatVectorColumn("vec", churnDim, vecs)
}

// step sends an insert, a delete and an upsert.
func (w *churnWriter) step(ctx context.Context, c *milvusclient.Client) error {
	// Insert new keys.
	idx := make([]int, churnInsert)
	vers := make([]int32, churnInsert)
	for j := range idx {
		idx[j] = len(w.ver) + j
	}
	if _, err := c.Insert(ctx, w.rows(idx, vers)); err != nil {
		return err
	}
	for range idx {
		w.ver = append(w.ver, 0)
	}
	w.live.Add(churnInsert)
	// Delete 30% as many live keys.
	del := w.pickLive(churnDelete)
	ids := make([]int64, len(del))
	for j, i := range del {
		ids[j] = w.key(i)
	}
	if _, err := c.Delete(ctx, milvusclient.NewDeleteOption(churnColl).WithInt64IDs("id", ids)); err != nil {
		return err
	}
	for _, i := range del {
		w.ver[i] = -1
	}
	w.live.Add(-int64(len(del)))
	// Upsert live keys to a new version.
	up := w.pickLive(churnUpsert)
	vers = make([]int32, len(up))
	for j, i := range up {
		vers[j] = w.ver[i] + 1
	}
	if _, err := c.Upsert(ctx, w.rows(up, vers)); err != nil {
		return err
	}
	for j, i := range up {
		w.ver[i] = vers[j]
	}
	w.ops.Add(3)
	return nil
}

// diskUse is the size of the data directory's parts.
type diskUse struct{ storage, wal, meta, tmp int64 }

func (d diskUse) total() int64 { return d.storage + d.wal + d.meta }

func measureDisk(t *testing.T, dir string) diskUse {
	t.Helper()
	var d diskUse
	sum := func(sub string, tmp *int64) int64 {
		var n int64
		err := filepath.WalkDir(filepath.Join(dir, sub), func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if !e.Type().IsRegular() {
				return nil
			}
			fi, err := e.Info()
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			n += fi.Size()
			if tmp != nil && strings.HasPrefix(e.Name(), ".tmp-") {
				*tmp += fi.Size()
			}
			return nil
		})
		require.NoError(t, err)
		return n
	}
	d.storage = sum("storage", &d.tmp)
	d.wal = sum("wal", nil)
	d.meta = sum("meta.db", nil)
	return d
}

// segStats summarizes the collection's segments that are not dropped.
type segStats struct {
	growing, sealed, flushed, l0 int
	rows                         int64 // rows of L1 segments (synced ones for growing)
}

func churnSegments(ctx context.Context, t *testing.T, svc milvuspb.MilvusServiceClient) segStats {
	t.Helper()
	var s segStats
	for _, info := range persistentSegments(ctx, t, svc, churnColl) {
		switch {
		case info.GetLevel() == commonpb.SegmentLevel_L0:
			s.l0++
			continue
		case info.GetState() == commonpb.SegmentState_Growing:
			s.growing++
		case info.GetState() == commonpb.SegmentState_Sealed:
			s.sealed++
		default:
			s.flushed++
		}
		s.rows += info.GetNumRows()
	}
	return s
}

// saveHeapProfile writes the server's heap profile, taken after a forced
// GC, to path (for go tool pprof).
func saveHeapProfile(t *testing.T, p *proc, path string) {
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + p.metrics + "/debug/pprof/heap?gc=1")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, body, 0o644))
	t.Logf("heap profile at the end of the churn: %s", path)
}

// procMemory returns the server's resident set (VmRSS) and the Go heap in
// use (go_memstats_heap_inuse_bytes from its metrics endpoint, garbage not
// yet collected included); 0 when unknown.
func procMemory(p *proc) (rss, heap int64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				rss = kb << 10
			}
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + p.metrics + "/metrics")
	if err != nil {
		return rss, 0
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			heap = int64(f)
		}
	}
	return rss, heap
}

type churnPoint struct {
	at      time.Duration
	phase   string
	disk    diskUse
	rss     int64
	heap    int64
	alive   int64 // live heap after a forced GC (0 = not measured)
	live    int64
	ops     int64
	segs    segStats
	comment string
}

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func (s churnPoint) row() string {
	liveBytes := s.live * churnRowBytes
	ratio := math.NaN()
	if liveBytes > 0 {
		ratio = float64(s.disk.total()) / float64(liveBytes)
	}
	perRow := func(n int64) float64 {
		if s.live == 0 {
			return math.NaN()
		}
		return float64(n) / float64(s.live)
	}
	alive := "-"
	if s.alive > 0 {
		alive = fmt.Sprintf("%s (%.0f B/row)", mib(s.alive), perRow(s.alive))
	}
	return fmt.Sprintf("| %6s | %-22s | %9d | %8s | %8s | %7s | %7s | %5.2f | %3d/%3d/%3d/%3d | %9d | %7s | %6.0f | %7s | %6.0f | %s | %s",
		s.at.Round(time.Second), s.phase, s.live, mib(liveBytes), mib(s.disk.storage), mib(s.disk.wal),
		mib(s.disk.total()), ratio, s.segs.growing, s.segs.sealed, s.segs.flushed, s.segs.l0, s.segs.rows,
		mib(s.rss), perRow(s.rss), mib(s.heap), perRow(s.heap), alive, s.comment)
}

const churnHeader = "|   time | phase                  | live rows | live MiB | storage | wal MiB | total | disk/live | segs G/S/F/L0 | seg rows  | RSS MiB | RSS B/row | heap MiB | heap B/row | heap after GC MiB |\n" +
	"|--------|------------------------|-----------|----------|---------|---------|-------|-----------|---------------|-----------|---------|-----------|----------|------------|-------------------|"

// distHeap is a max-heap of the best (smallest) distances seen.
type distHeap []struct {
	d  float32
	id int64
}

func (h distHeap) Len() int           { return len(h) }
func (h distHeap) Less(i, j int) bool { return h[i].d > h[j].d }
func (h distHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *distHeap) Push(x any) {
	*h = append(*h, x.(struct {
		d  float32
		id int64
	}))
}
func (h *distHeap) Pop() any { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// churnTruth computes the exact top-k (L2) of every query over the live rows.
func churnTruth(ws []*churnWriter, queries [][]float32) []map[int64]bool {
	per := make([][]distHeap, len(ws)) // one goroutine per writer's keys
	var wg sync.WaitGroup
	for g, w := range ws {
		wg.Go(func() { per[g] = churnTop(w, queries) })
	}
	wg.Wait()
	out := make([]map[int64]bool, len(queries))
	for q := range queries {
		var all distHeap
		for g := range per {
			all = append(all, per[g][q]...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].d < all[j].d })
		out[q] = map[int64]bool{}
		for _, e := range all[:min(churnTopK, len(all))] {
			out[q][e.id] = true
		}
	}
	return out
}

// churnTop returns the best churnTopK rows of one writer for each query.
func churnTop(w *churnWriter, queries [][]float32) []distHeap {
	hs := make([]distHeap, len(queries))
	vec := make([]float32, churnDim)
	{
		for i, v := range w.ver {
			if v < 0 {
				continue
			}
			id := w.key(i)
			churnVector(id, v, vec)
			for q, qv := range queries {
				var d float32
				for k := range vec {
					x := vec[k] - qv[k]
					d += x * x
				}
				h := &hs[q]
				if h.Len() < churnTopK {
					heap.Push(h, struct {
						d  float32
						id int64
					}{d, id})
				} else if d < (*h)[0].d {
					(*h)[0].d, (*h)[0].id = d, id
					heap.Fix(h, 0)
				}
			}
		}
	}
	return hs
}

// churnRecall searches with Strong consistency and returns the mean recall@10.
func churnRecall(ctx context.Context, t *testing.T, c *milvusclient.Client, ws []*churnWriter, queries [][]float32) float64 {
	t.Helper()
	truth := churnTruth(ws, queries)
	vs := make([]entity.Vector, len(queries))
	for i, q := range queries {
		vs[i] = entity.FloatVector(q)
	}
	res, err := c.Search(ctx, milvusclient.NewSearchOption(churnColl, churnTopK, vs).
		WithConsistencyLevel(entity.ClStrong).WithSearchParam("metric_type", "L2"))
	require.NoError(t, err)
	require.Len(t, res, len(queries))
	var hit, total int
	for q, r := range res {
		for i := 0; i < r.ResultCount; i++ {
			id, err := r.IDs.GetAsInt64(i)
			require.NoError(t, err)
			if truth[q][id] {
				hit++
			}
		}
		total += len(truth[q])
	}
	return float64(hit) / float64(total)
}

func churnCount(ctx context.Context, t *testing.T, c *milvusclient.Client) int64 {
	t.Helper()
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(churnColl).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	return n
}

func TestChurn(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	cfgPath := *churnConfig
	cfgBody := churnDefaultConfig
	if cfgPath == "" {
		cfgPath = writeTestConfig(t, churnDefaultConfig)
	} else {
		b, err := os.ReadFile(cfgPath)
		require.NoError(t, err)
		cfgBody = string(b)
	}
	t.Logf("server config: %s", strings.Join(strings.Fields(cfgBody), " "))
	ctx, cancel := context.WithTimeout(context.Background(), *churnDuration+30*time.Minute)
	defer cancel()
	p := startProc(t, bin, dir, "--config", cfgPath)
	c := p.client(t)
	svc := c.GetService()
	schema := entity.NewSchema().WithName(churnColl).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(churnDim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(churnColl, schema).WithShardNum(2)))
	indexAndLoad(ctx, t, c, churnColl, entity.L2)

	ws := make([]*churnWriter, *churnWriters)
	for g := range ws {
		ws[g] = &churnWriter{g: g, rng: rand.New(rand.NewPCG(uint64(g), 7))}
	}
	qrng := rand.New(rand.NewPCG(99, 99))
	queries := make([][]float32, churnQueries)
	for i := range queries {
		queries[i] = make([]float32, churnDim)
		for k := range queries[i] {
			queries[i][k] = qrng.Float32()
		}
	}

	start := time.Now()
	var samples []churnPoint
	sample := func(phase, comment string) churnPoint {
		var live, ops int64
		for _, w := range ws {
			live += w.live.Load()
			ops += w.ops.Load()
		}
		rss, heap := procMemory(p)
		var alive int64
		if phase != "churn" { // a forced GC would slow the writers down
			alive = heapAfterGC(p)
		}
		s := churnPoint{
			at: time.Since(start), phase: phase, disk: measureDisk(t, dir), rss: rss, heap: heap, alive: alive,
			live: live, ops: ops, segs: churnSegments(ctx, t, svc), comment: comment,
		}
		samples = append(samples, s)
		t.Log(s.row())
		return s
	}

	// Churn.
	// Writers finish the request in flight when the time is up, so that
	// what they recorded is what the server acknowledged.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var werr atomic.Value
	for _, w := range ws {
		wg.Go(func() {
			for !stop.Load() {
				if err := w.step(ctx, c); err != nil {
					werr.Store(err)
					stop.Store(true)
					return
				}
			}
		})
	}
	tick := time.NewTicker(*churnSample)
	timeUp := time.After(*churnDuration)
	var peak churnPoint
	for !stop.Load() {
		select {
		case <-timeUp:
			stop.Store(true)
		case <-tick.C:
			s := sample("churn", "")
			if s.disk.total() > peak.disk.total() {
				peak = s
			}
		}
	}
	tick.Stop()
	wg.Wait()
	if err, _ := werr.Load().(error); err != nil {
		t.Fatalf("a write failed: %v\nserver stderr:\n%s", err, p.stderr.String())
	}
	var ops int64
	for _, w := range ws {
		ops += w.ops.Load()
	}
	rate := float64(ops) / churnDuration.Seconds()
	end := sample("end of churn", fmt.Sprintf("%.1f requests/s", rate))
	if *churnProfile != "" {
		saveHeapProfile(t, p, *churnProfile)
	}
	recallBefore := churnRecall(ctx, t, c, ws, queries)
	t.Logf("recall@%d vs brute force at the end of churn: %.4f", churnTopK, recallBefore)
	require.Equal(t, end.live, churnCount(ctx, t, c), "count(*) equals the live rows")

	// Automatic compaction and GC only.
	settleEnd := time.Now().Add(*churnSettle)
	for time.Now().Before(settleEnd) {
		time.Sleep(min(*churnSample, time.Until(settleEnd)))
		sample("auto settle", "")
	}
	auto := samples[len(samples)-1]

	// Flush and compact until every delete is applied, then wait for GC.
	deadline := time.Now().Add(20 * time.Minute)
	for iter := 1; ; iter++ {
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(churnColl))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		resp, err := svc.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: churnColl})
		require.NoError(t, err)
		require.Zero(t, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
		for {
			st, err := compactionState(ctx, svc, resp.GetCompactionID())
			require.NoError(t, err)
			if st.GetState() == commonpb.CompactionState_Completed {
				break
			}
			require.True(t, time.Now().Before(deadline), "manual compaction did not complete")
			time.Sleep(200 * time.Millisecond)
		}
		s := churnSegments(ctx, t, svc)
		if s.l0 == 0 && s.growing == 0 && s.sealed == 0 && s.rows == end.live {
			sample("manual compaction", fmt.Sprintf("after %d rounds", iter))
			break
		}
		require.True(t, time.Now().Before(deadline), "compaction did not converge: %+v, %d live rows", s, end.live)
		time.Sleep(time.Second)
	}
	gcStart := time.Now()
	for {
		live := map[int64]bool{}
		for _, s := range persistentSegments(ctx, t, svc, churnColl) {
			live[s.GetSegmentID()] = true
		}
		stale := 0
		for _, k := range liveStoredKeys(t, dir) {
			if !live[k.SegmentID] {
				stale++
			}
		}
		if stale == 0 && time.Since(gcStart) > time.Minute+15*time.Second { // orphan retention + GC interval
			break
		}
		require.True(t, time.Now().Before(deadline), "GC did not finish: %d files of dropped segments", stale)
		time.Sleep(5 * time.Second)
	}
	final := sample("after compaction + GC", "")
	recallAfter := churnRecall(ctx, t, c, ws, queries)
	t.Logf("recall@%d vs brute force after compaction + GC: %.4f", churnTopK, recallAfter)
	require.Equal(t, final.live, churnCount(ctx, t, c))

	var b strings.Builder
	fmt.Fprintf(&b, "\nchurn %v, %d writers (insert %d, delete %d, upsert %d per loop), %.1f requests/s, %d-dim rows of %d bytes\n",
		*churnDuration, len(ws), churnInsert, churnDelete, churnUpsert, rate, churnDim, churnRowBytes)
	fmt.Fprintln(&b, churnHeader)
	for _, s := range samples {
		fmt.Fprintln(&b, s.row())
	}
	ratio := func(s churnPoint) float64 { return float64(s.disk.total()) / float64(s.live*churnRowBytes) }
	fmt.Fprintf(&b, "\npeak disk during churn: %s MiB at %v (%.2f× live)\n", mib(peak.disk.total()), peak.at.Round(time.Second), ratio(peak))
	fmt.Fprintf(&b, "end of churn:          %s MiB (storage %s, wal %s), %.2f× live\n", mib(end.disk.total()), mib(end.disk.storage), mib(end.disk.wal), ratio(end))
	fmt.Fprintf(&b, "after auto settle:     %s MiB (storage %s, wal %s), %.2f× live\n", mib(auto.disk.total()), mib(auto.disk.storage), mib(auto.disk.wal), ratio(auto))
	fmt.Fprintf(&b, "after compaction + GC: %s MiB (storage %s, wal %s), %.2f× live; storage/live %.2f\n", mib(final.disk.total()),
		mib(final.disk.storage), mib(final.disk.wal), ratio(final), float64(final.disk.storage)/float64(final.live*churnRowBytes))
	fmt.Fprintf(&b, "recall@%d vs brute force: %.4f at the end of churn, %.4f after compaction + GC\n", churnTopK, recallBefore, recallAfter)
	var peakRSS churnPoint
	for _, s := range samples {
		if s.rss > peakRSS.rss {
			peakRSS = s
		}
	}
	perRow := func(n, rows int64) float64 { return float64(n) / float64(max(rows, 1)) }
	fmt.Fprintf(&b, "server memory: peak RSS %s MiB at %v (%.0f B/live row); end of churn RSS %.0f, heap after GC %.0f B/live row; "+
		"after compaction + GC RSS %.0f, heap after GC %.0f B/live row (raw rows: %d B)\n",
		mib(peakRSS.rss), peakRSS.at.Round(time.Second), perRow(peakRSS.rss, peakRSS.live), perRow(end.rss, end.live),
		perRow(end.alive, end.live), perRow(final.rss, final.live), perRow(final.alive, final.live), churnRowBytes)
	t.Log(b.String())
}
