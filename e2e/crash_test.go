package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// The crash test drives a Strata child process with concurrent inserts,
// deletes and upserts, kills it with SIGKILL at a random moment, restarts it
// over the same data directory and checks, with Strong consistency, that
//
//   - every acknowledged insert and upsert is present with its last
//     acknowledged value, and every acknowledged delete is gone;
//   - no primary key appears twice (rows by range, and count(*));
//   - the one unacknowledged request of each writer (cut by the kill) is
//     either fully applied or not at all, row by row and as a whole; an
//     upsert never leaves a key missing;
//   - nothing else appears.
//
// With one shard each request is a single WAL call and must be all or
// nothing; with two shards it is checked key by key.

const (
	crashColl     = "crash"
	crashDim      = 16
	crashWriters  = 4
	crashKeySpace = 1 << 40 // key ranges of the writers: g*crashKeySpace + n
)

// keyState is a key's expected state: absent, or present with val.
type keyState struct {
	present bool
	val     int64
}

// pendingOp is a request that was sent but not acknowledged.
type pendingOp struct {
	kind   string
	keys   []int64
	before []keyState
	after  []keyState
}

// crashWriter owns a disjoint key range and records what was acknowledged.
type crashWriter struct {
	g       int
	rng     *rand.Rand
	next    int64              // next fresh key (offset in the range)
	state   map[int64]keyState // acknowledged (or resolved) state of every key it ever wrote
	live    []int64            // keys present in state, for random picks
	livePos map[int64]int
	pending *pendingOp
	acked   int
}

func newCrashWriter(g int) *crashWriter {
	return &crashWriter{
		g: g, rng: rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano()))),
		state: map[int64]keyState{}, livePos: map[int64]int{},
	}
}

func (w *crashWriter) set(k int64, s keyState) {
	w.state[k] = s
	_, isLive := w.livePos[k]
	switch {
	case s.present && !isLive:
		w.livePos[k] = len(w.live)
		w.live = append(w.live, k)
	case !s.present && isLive:
		i := w.livePos[k]
		last := w.live[len(w.live)-1]
		w.live[i] = last
		w.livePos[last] = i
		w.live = w.live[:len(w.live)-1]
		delete(w.livePos, k)
	}
}

// pick returns up to n distinct live keys.
func (w *crashWriter) pick(n int) []int64 {
	n = min(n, len(w.live))
	out := make([]int64, 0, n)
	for _, i := range w.rng.Perm(len(w.live))[:n] {
		out = append(out, w.live[i])
	}
	return out
}

func crashVector(id, val int64) []float32 {
	v := make([]float32, crashDim)
	for i := range v {
		v[i] = float32((id+val+int64(i))%97) / 97
	}
	return v
}

func crashRows(keys []int64, vals []keyState) writeOption {
	ids := make([]int64, len(keys))
	values := make([]int64, len(keys))
	vecs := make([][]float32, len(keys))
	for i, k := range keys {
		ids[i], values[i], vecs[i] = k, vals[i].val, crashVector(k, vals[i].val)
	}
	return milvusclient.NewColumnBasedInsertOption(crashColl).WithInt64Column("id", ids).
		WithInt64Column("val", values).WithFloatVectorColumn("vec", crashDim, vecs)
}

// step sends one random request. It returns the error of the request; on
// error the request stays pending.
func (w *crashWriter) step(ctx context.Context, c *milvusclient.Client, big bool) error {
	op := &pendingOp{}
	r := w.rng.IntN(10)
	switch {
	case r < 5 || len(w.live) < 10:
		n := 1 + w.rng.IntN(200)
		if big && w.rng.IntN(20) == 0 {
			n = 15000 // ~1.3 MB: larger than the WAL's write buffer
		}
		op.kind = "insert"
		for i := 0; i < n; i++ {
			k := int64(w.g)*crashKeySpace + w.next
			w.next++
			op.keys = append(op.keys, k)
			op.before = append(op.before, keyState{})
			op.after = append(op.after, keyState{present: true, val: 0})
		}
	case r < 7:
		op.kind = "delete"
		op.keys = w.pick(1 + w.rng.IntN(20))
		for _, k := range op.keys {
			op.before = append(op.before, w.state[k])
			op.after = append(op.after, keyState{})
		}
	default:
		n := 1 + w.rng.IntN(50)
		if big && w.rng.IntN(20) == 0 {
			n = 15000
		}
		op.kind = "upsert"
		op.keys = w.pick(n)
		for _, k := range op.keys {
			s := w.state[k]
			op.before = append(op.before, s)
			op.after = append(op.after, keyState{present: true, val: s.val + 1})
		}
	}
	w.pending = op
	var err error
	switch op.kind {
	case "insert":
		_, err = c.Insert(ctx, crashRows(op.keys, op.after))
	case "delete":
		_, err = c.Delete(ctx, milvusclient.NewDeleteOption(crashColl).WithInt64IDs("id", op.keys))
	case "upsert":
		_, err = c.Upsert(ctx, crashRows(op.keys, op.after))
	}
	if err != nil {
		return err
	}
	for i, k := range op.keys {
		w.set(k, op.after[i])
	}
	w.pending = nil
	w.acked++
	return nil
}

// run sends requests until ctx ends or a request fails; a failure before
// killed is set is reported.
func (w *crashWriter) run(ctx context.Context, t *testing.T, c *milvusclient.Client, killed *atomic.Bool, big bool) {
	for ctx.Err() == nil {
		if err := w.step(ctx, c, big); err != nil {
			if !killed.Load() && !errors.Is(err, context.Canceled) {
				t.Errorf("writer %d: %s failed while the server was up: %v", w.g, w.pending.kind, err)
			}
			return
		}
	}
}

// servedRows is what the server returns for the writers' key ranges: each
// key's value, the keys a range query returned more than once, and count(*).
type servedRows struct {
	vals     map[int64]int64
	repeated []int64
	count    int64
}

// readServed reads every row of the writers' key ranges and count(*) with
// Strong consistency.
func readServed(ctx context.Context, c *milvusclient.Client, ws []*crashWriter) (servedRows, error) {
	s := servedRows{vals: map[int64]int64{}}
	const chunk = 20000
	for _, w := range ws {
		base := int64(w.g) * crashKeySpace
		for lo := int64(0); lo < w.next; lo += chunk {
			rs, err := c.Query(ctx, milvusclient.NewQueryOption(crashColl).
				WithFilter(fmt.Sprintf("id >= %d and id < %d", base+lo, base+lo+chunk)).
				WithOutputFields("id", "val").WithConsistencyLevel(entity.ClStrong))
			if err != nil {
				return s, err
			}
			for i := 0; i < rs.ResultCount; i++ {
				id, err := rs.GetColumn("id").GetAsInt64(i)
				if err != nil {
					return s, err
				}
				val, err := rs.GetColumn("val").GetAsInt64(i)
				if err != nil {
					return s, err
				}
				if _, dup := s.vals[id]; dup {
					s.repeated = append(s.repeated, id)
				}
				s.vals[id] = val
			}
		}
	}
	rs, err := c.Query(ctx, milvusclient.NewQueryOption(crashColl).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return s, err
	}
	s.count, err = rs.GetColumn("count(*)").GetAsInt64(0)
	return s, err
}

// check fails on a key returned twice and on a count(*) that differs from
// the number of keys, and returns each key's value.
func (s servedRows) check(t *testing.T) map[int64]int64 {
	t.Helper()
	if len(s.repeated) > 0 {
		require.Fail(t, fmt.Sprintf("primary key %d returned twice", s.repeated[0]))
	}
	require.EqualValues(t, len(s.vals), s.count, "count(*) counts a key twice or a key outside the writers' ranges")
	return s.vals
}

// observe reads every row of the writers' key ranges with Strong
// consistency, failing on a key returned twice.
func observe(ctx context.Context, t *testing.T, c *milvusclient.Client, ws []*crashWriter) map[int64]int64 {
	t.Helper()
	s, err := readServed(ctx, c, ws)
	require.NoError(t, err)
	return s.check(t)
}

// verify checks the observed rows against the writers' records and resolves
// each pending request to what was observed.
// With wholeRequest, a pending request must be applied to all of its keys or
// to none (one shard: one WAL call); otherwise key by key (a request spans
// several pchannels, which fail independently).
func verify(t *testing.T, ws []*crashWriter, got map[int64]int64, wholeRequest bool) {
	t.Helper()
	seen := 0
	for _, w := range ws {
		pend := map[int64]int{}
		if p := w.pending; p != nil {
			for i, k := range p.keys {
				pend[k] = i
			}
		}
		for k, want := range w.state {
			if _, ok := pend[k]; ok {
				continue
			}
			val, present := got[k]
			require.Equal(t, want.present, present, "key %d (writer %d): acknowledged present=%v", k, w.g, want.present)
			if present {
				seen++
				require.Equal(t, want.val, val, "key %d (writer %d): last acknowledged value", k, w.g)
			}
		}
		if p := w.pending; p != nil {
			applied, notApplied := 0, 0
			for i, k := range p.keys {
				val, present := got[k]
				obs := keyState{present: present, val: val}
				if !present {
					obs.val = 0
				}
				norm := func(s keyState) keyState {
					if !s.present {
						return keyState{}
					}
					return s
				}
				switch obs {
				case norm(p.after[i]):
					applied++
				case norm(p.before[i]):
					notApplied++
				default:
					t.Fatalf("key %d of an unacknowledged %s: observed %+v, want %+v (before) or %+v (after)",
						k, p.kind, obs, p.before[i], p.after[i])
				}
				if present {
					seen++
				}
				w.set(k, obs)
			}
			require.True(t, !wholeRequest || applied == 0 || notApplied == 0,
				"unacknowledged %s of %d keys is partly applied: %d applied, %d not", p.kind, len(p.keys), applied, notApplied)
			t.Logf("writer %d: unacknowledged %s of %d keys: applied=%v", w.g, p.kind, len(p.keys), applied > 0 && notApplied == 0)
			w.pending = nil
		}
	}
	require.Len(t, got, seen, "rows that no writer wrote")
}

// waitLoaded polls until the collection is loaded again after a restart.
func waitLoaded(ctx context.Context, t *testing.T, c *milvusclient.Client) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(crashColl))
		if err == nil && st.State == entity.LoadStateLoaded {
			return
		}
		require.True(t, time.Now().Before(deadline), "collection not loaded after restart: %v %v", st, err)
		time.Sleep(100 * time.Millisecond)
	}
}

func createCrashCollection(ctx context.Context, t *testing.T, c *milvusclient.Client, shards int32) {
	t.Helper()
	schema := entity.NewSchema().WithName(crashColl).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("val").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(crashDim))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(crashColl, schema).WithShardNum(shards)))
	indexAndLoad(ctx, t, c, crashColl, entity.L2)
}

func TestCrashRecovery(t *testing.T) {
	for _, shards := range []int32{1, 2} {
		t.Run(fmt.Sprintf("%d shards", shards), func(t *testing.T) {
			if shards > 1 && testing.Short() {
				t.Skip("one shard under -short")
			}
			crashRecovery(t, shards)
		})
	}
}

func crashRecovery(t *testing.T, shards int32) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	ws := make([]*crashWriter, crashWriters)
	for g := range ws {
		ws[g] = newCrashWriter(g)
	}

	type round struct {
		name string
		// during runs while the writers write, then the process is killed
		// and wctx canceled.
		during func(wctx context.Context, t *testing.T, c *milvusclient.Client)
	}
	sleep := func(lo, hi time.Duration) { time.Sleep(lo + time.Duration(rng.Int64N(int64(hi-lo)))) }
	rounds := []round{
		{"before any flush", func(context.Context, *testing.T, *milvusclient.Client) {
			sleep(300*time.Millisecond, 1500*time.Millisecond)
		}},
		{"while a flush is in flight", func(wctx context.Context, t *testing.T, c *milvusclient.Client) {
			sleep(300*time.Millisecond, 800*time.Millisecond)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if ft, err := c.Flush(wctx, milvusclient.NewFlushOption(crashColl)); err == nil {
					_ = ft.Await(wctx) // cut by the kill
				}
			}()
			sleep(0, 150*time.Millisecond)
			t.Cleanup(func() { <-done })
		}},
		{"after a flush, with writes on top", func(_ context.Context, t *testing.T, c *milvusclient.Client) {
			sleep(200*time.Millisecond, 600*time.Millisecond)
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(crashColl))
			require.NoError(t, err)
			require.NoError(t, ft.Await(ctx))
			sleep(200*time.Millisecond, 1000*time.Millisecond)
		}},
		{"right after a restart", func(context.Context, *testing.T, *milvusclient.Client) { sleep(0, 300*time.Millisecond) }},
	}
	if testing.Short() {
		rounds = rounds[:1]
	}

	p := startProc(t, bin, dir)
	c := p.client(t)
	createCrashCollection(ctx, t, c, shards)
	outer := t // owns the processes and clients across rounds
	for _, r := range rounds {
		t.Run(r.name, func(t *testing.T) {
			var killed atomic.Bool
			wctx, wcancel := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for _, w := range ws {
				wg.Go(func() { w.run(wctx, t, c, &killed, !testing.Short()) })
			}
			r.during(wctx, t, c)
			killed.Store(true)
			p.kill(t)
			wcancel()
			wg.Wait()
			acked := 0
			for _, w := range ws {
				acked += w.acked
			}
			t.Logf("killed after %d acknowledged requests in all", acked)

			p = startProc(outer, bin, dir)
			c = p.client(outer)
			waitLoaded(ctx, t, c)
			verify(t, ws, observe(ctx, t, c, ws), shards == 1)
		})
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
			return
		}
	}
}

func TestSIGTERMShutdown(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := startProc(t, bin, dir)
	c := p.client(t)
	createCrashCollection(ctx, t, c, 2)
	w := newCrashWriter(0)
	for i := 0; i < 30; i++ {
		require.NoError(t, w.step(ctx, c, false))
	}
	start := time.Now()
	require.Equal(t, 0, p.term(t), "clean shutdown exits 0; stderr:\n%s", p.stderr.String())
	t.Logf("shutdown took %v", time.Since(start))

	p = startProc(t, bin, dir)
	c = p.client(t)
	waitLoaded(ctx, t, c)
	ws := []*crashWriter{w}
	verify(t, ws, observe(ctx, t, c, ws), true)
	// And again, after a flush.
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(crashColl))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	for i := 0; i < 10; i++ {
		require.NoError(t, w.step(ctx, c, false))
	}
	start = time.Now()
	require.Equal(t, 0, p.term(t), "clean shutdown exits 0; stderr:\n%s", p.stderr.String())
	t.Logf("shutdown took %v", time.Since(start))
	p = startProc(t, bin, dir)
	c = p.client(t)
	waitLoaded(ctx, t, c)
	verify(t, ws, observe(ctx, t, c, ws), true)
	keys := make([]int64, 0, len(w.state))
	for k := range w.state {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	require.NotEmpty(t, keys)
}
