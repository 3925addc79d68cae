package e2e

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// The concurrent test checks that reads are right while writes, flushes,
// compactions and index builds run. One writer per collection sends inserts,
// deletes and upserts, one at a time, and records every state it makes: the
// state after its v-th request is version v. A request is "planned" when it
// is sent and "acknowledged" when answered. A Strong read that starts when v0
// requests are acknowledged and ends when v1 are planned sees, for every key,
// its state at some version in [v0, v1] (a request spanning both shards may be
// visible on one shard and not yet on the other, so the versions may differ
// from key to key, but never outside the window). From that it checks
//
//   - count(*) lies between the smallest and the largest size in the window
//     (every request moves the size one way, so a half-visible one too): a
//     row counted twice (a growing segment and its flushed copy, or the inputs
//     and the output of a compaction) or missed shows up here;
//   - a query by id range returns each id once, each with a state from the
//     window, and every key present throughout the window;
//   - a get returns for each key a state from the window;
//   - a search returns topK distinct ids, each with a value from the window
//     and a distance equal to that of the value's vector; on the collection
//     searched exactly (FLAT), every key with one vector throughout the
//     window that is nearer than the worst hit is among the hits.
//
// Meanwhile the collections' segments seal by size every few hundred rows, a
// flusher flushes, a compactor asks for manual compactions (and automatic
// ones trigger on two small segments), and the HNSW and FLAT indexes made
// before load build on each sealed segment, so handoffs, compactions and
// index attaches happen under the readers. At the end, with everything quiet, every read must equal the final
// state exactly, the query node must serve no segment twice, and again after
// a restart over the same directory.

const (
	concDim    = 8
	concShards = 2
	concTopK   = 10
)

// concState is a key's state from some version on.
type concState struct {
	v       int // version that set it
	present bool
	val     int64
	vec     []float32
}

func (s concState) same(o concState) bool {
	return s.present == o.present && (!s.present || s.val == o.val)
}

func (s concState) String() string {
	if !s.present {
		return fmt.Sprintf("absent@v%d", s.v)
	}
	return fmt.Sprintf("val=%d@v%d", s.val, s.v)
}

func concVec(id, val int64) []float32 {
	r := rand.New(rand.NewPCG(uint64(id), uint64(val)*0x9e3779b97f4a7c15+1))
	v := make([]float32, concDim)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// concTracker is the history of one collection's acknowledged states.
type concTracker struct {
	coll  string
	exact bool // searched exactly (no HNSW index)

	mu      sync.Mutex
	acked   int                   // requests acknowledged
	planned int                   // requests sent (acked or acked+1)
	sizes   []int                 // sizes[v]: live keys after v requests
	hist    map[int64][]concState // per key, by version
	keys    []int64               // every key ever written
	lastTS  uint64
	ops     map[string]int

	// Owned by the writer.
	rng   *rand.Rand
	next  int64
	cur   map[int64]concState
	live  []int64
	pos   map[int64]int
	dead  []int64
	nlive int
}

func newConcTracker(coll string, exact bool, seed uint64) *concTracker {
	return &concTracker{
		coll: coll, exact: exact, sizes: []int{0}, hist: map[int64][]concState{},
		ops: map[string]int{}, rng: rand.New(rand.NewPCG(seed, 7)), cur: map[int64]concState{}, pos: map[int64]int{},
	}
}

// start returns the first version a read that starts now may see.
func (tr *concTracker) start() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.acked
}

// states returns the states key k may be seen in by a read of window [v0, v1].
// The caller holds mu.
func (tr *concTracker) states(k int64, v0, v1 int) []concState {
	h := tr.hist[k]
	i := sort.Search(len(h), func(i int) bool { return h[i].v > v0 })
	var out []concState
	if i == 0 {
		out = append(out, concState{v: 0})
	} else {
		out = append(out, h[i-1])
	}
	for ; i < len(h) && h[i].v <= v1; i++ {
		out = append(out, h[i])
	}
	return out
}

// sizeRange returns the smallest and largest sizes of versions v0..v1.
func (tr *concTracker) sizeRange(v0, v1 int) (lo, hi int) {
	lo, hi = tr.sizes[v0], tr.sizes[v0]
	for v := v0 + 1; v <= v1; v++ {
		lo, hi = min(lo, tr.sizes[v]), max(hi, tr.sizes[v])
	}
	return lo, hi
}

func (tr *concTracker) setLive(k int64, present bool) {
	_, isLive := tr.pos[k]
	switch {
	case present && !isLive:
		tr.pos[k] = len(tr.live)
		tr.live = append(tr.live, k)
	case !present && isLive:
		i := tr.pos[k]
		last := tr.live[len(tr.live)-1]
		tr.live[i] = last
		tr.pos[last] = i
		tr.live = tr.live[:len(tr.live)-1]
		delete(tr.pos, k)
		tr.dead = append(tr.dead, k)
	}
}

func (tr *concTracker) pickLive(n int) []int64 {
	n = min(n, len(tr.live))
	out := make([]int64, 0, n)
	for _, i := range tr.rng.Perm(len(tr.live))[:n] {
		out = append(out, tr.live[i])
	}
	return out
}

// pickDead returns up to n distinct deleted keys that are still absent.
func (tr *concTracker) pickDead(n int) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for tries := 0; tries < 2*n && len(tr.dead) > 0 && len(out) < n; tries++ {
		i := tr.rng.IntN(len(tr.dead))
		k := tr.dead[i]
		tr.dead[i] = tr.dead[len(tr.dead)-1]
		tr.dead = tr.dead[:len(tr.dead)-1]
		if _, isLive := tr.pos[k]; !isLive && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// step sends one random request and records it.
func (tr *concTracker) step(ctx context.Context, svc milvuspb.MilvusServiceClient, maxKeys int) error {
	var kind string
	var keys []int64
	var after []concState
	r := tr.rng.IntN(10)
	switch {
	case len(tr.live) < 50 || (r < 5 && len(tr.live) < maxKeys):
		kind = "insert"
		n := 1 + tr.rng.IntN(100)
		if tr.rng.IntN(4) == 0 {
			keys = tr.pickDead(n / 4)
		}
		for len(keys) < n {
			keys = append(keys, tr.next)
			tr.next++
		}
		for range keys {
			after = append(after, concState{present: true, val: 0})
		}
	case r < 8:
		kind = "delete"
		keys = tr.pickLive(1 + tr.rng.IntN(30))
		if tr.rng.IntN(5) == 0 {
			keys = append(keys, tr.pickDead(3)...) // deleting absent keys is harmless
		}
		for range keys {
			after = append(after, concState{})
		}
	default:
		kind = "upsert"
		keys = tr.pickLive(1 + tr.rng.IntN(40))
		keys = append(keys, tr.pickDead(tr.rng.IntN(3))...)
		for _, k := range keys {
			after = append(after, concState{present: true, val: tr.cur[k].val + 1})
		}
	}
	size := tr.nlive
	for i, k := range keys {
		if after[i].present {
			after[i].vec = concVec(k, after[i].val)
		}
		was := tr.cur[k].present
		switch {
		case was && !after[i].present:
			size--
		case !was && after[i].present:
			size++
		}
	}

	tr.mu.Lock()
	tr.planned = tr.acked + 1
	for i, k := range keys {
		after[i].v = tr.planned
		if _, ok := tr.hist[k]; !ok {
			tr.keys = append(tr.keys, k)
		}
		tr.hist[k] = append(tr.hist[k], after[i])
	}
	tr.sizes = append(tr.sizes, size)
	tr.mu.Unlock()

	var ts uint64
	var st *commonpb.Status
	var err error
	if kind == "delete" {
		strs := make([]string, len(keys))
		for i, k := range keys {
			strs[i] = fmt.Sprint(k)
		}
		var resp *milvuspb.MutationResult
		resp, err = svc.Delete(ctx, &milvuspb.DeleteRequest{
			CollectionName: tr.coll,
			Expr:           "id in [" + strings.Join(strs, ",") + "]",
		})
		ts, st = resp.GetTimestamp(), resp.GetStatus()
	} else {
		vals := make([]int64, len(keys))
		vecs := make([]float32, 0, len(keys)*concDim)
		for i := range keys {
			vals[i] = after[i].val
			vecs = append(vecs, after[i].vec...)
		}
		fds := []*schemapb.FieldData{longField("id", keys...), longField("val", vals...), vecField("vec", concDim, vecs...)}
		var resp *milvuspb.MutationResult
		if kind == "insert" {
			resp, err = svc.Insert(ctx, &milvuspb.InsertRequest{CollectionName: tr.coll, NumRows: uint32(len(keys)), FieldsData: fds})
		} else {
			resp, err = svc.Upsert(ctx, &milvuspb.UpsertRequest{CollectionName: tr.coll, NumRows: uint32(len(keys)), FieldsData: fds})
		}
		ts, st = resp.GetTimestamp(), resp.GetStatus()
	}
	if err == nil {
		err = merr.Error(st)
	}
	if err != nil {
		return fmt.Errorf("%s: %s of %d keys: %w", tr.coll, kind, len(keys), err)
	}

	tr.mu.Lock()
	defer tr.mu.Unlock()
	if ts <= tr.lastTS {
		return fmt.Errorf("%s: %s acknowledged at timestamp %d, not after the previous request's %d", tr.coll, kind, ts, tr.lastTS)
	}
	tr.lastTS = ts
	tr.acked = tr.planned
	tr.ops[kind]++
	for i, k := range keys {
		tr.cur[k] = after[i]
		tr.setLive(k, after[i].present)
	}
	tr.nlive = size
	return nil
}

// A concReader checks reads of one collection against its tracker.
type concReader struct {
	c   *milvusclient.Client
	tr  *concTracker
	rng *rand.Rand
}

// end returns the last version a read that ends now may see.
func (r *concReader) end() int {
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	return r.tr.planned
}

func (r *concReader) count(ctx context.Context) error {
	v0 := r.tr.start()
	rs, err := r.c.Query(ctx, milvusclient.NewQueryOption(r.tr.coll).WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return fmt.Errorf("count(*): %w", err)
	}
	v1 := r.end()
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	if err != nil {
		return err
	}
	r.tr.mu.Lock()
	lo, hi := r.tr.sizeRange(v0, v1)
	r.tr.mu.Unlock()
	if int(n) < lo || int(n) > hi {
		return fmt.Errorf("%s: count(*) = %d, but the collection held between %d and %d rows while the read ran (versions %d..%d)",
			r.tr.coll, n, lo, hi, v0, v1)
	}
	return nil
}

// rows collects (id, val) pairs of a result set, failing on a repeated id.
func rows(rs milvusclient.ResultSet) (map[int64]int64, error) {
	ids, vals := rs.GetColumn("id"), rs.GetColumn("val")
	if rs.ResultCount > 0 && (ids == nil || vals == nil) {
		return nil, errors.New("result lacks id or val")
	}
	got := make(map[int64]int64, rs.ResultCount)
	for i := 0; i < rs.ResultCount; i++ {
		id, err := ids.GetAsInt64(i)
		if err != nil {
			return nil, err
		}
		val, err := vals.GetAsInt64(i)
		if err != nil {
			return nil, err
		}
		if _, dup := got[id]; dup {
			return nil, fmt.Errorf("id %d returned twice", id)
		}
		got[id] = val
	}
	return got, nil
}

// checkKey checks what a read saw of key k against the window.
func (r *concReader) checkKey(k int64, present bool, val int64, v0, v1 int, what string) error {
	ss := r.tr.states(k, v0, v1)
	for _, s := range ss {
		if s.present == present && (!present || s.val == val) {
			return nil
		}
	}
	seen := "absent"
	if present {
		seen = fmt.Sprintf("val=%d", val)
	}
	return fmt.Errorf("%s: %s saw key %d %s, but while the read ran (versions %d..%d) it was only %v",
		r.tr.coll, what, k, seen, v0, v1, ss)
}

func (r *concReader) rangeQuery(ctx context.Context) error {
	r.tr.mu.Lock()
	hiKey := int64(len(r.tr.keys))
	r.tr.mu.Unlock()
	lo := r.rng.Int64N(hiKey + 1)
	hi := lo + 1 + r.rng.Int64N(600)
	v0 := r.tr.start()
	rs, err := r.c.Query(ctx, milvusclient.NewQueryOption(r.tr.coll).
		WithFilter(fmt.Sprintf("id >= %d and id < %d", lo, hi)).WithOutputFields("id", "val").
		WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return fmt.Errorf("range query: %w", err)
	}
	v1 := r.end()
	got, err := rows(rs)
	if err != nil {
		return fmt.Errorf("%s: range query [%d, %d): %w", r.tr.coll, lo, hi, err)
	}
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	for k, val := range got {
		if k < lo || k >= hi {
			return fmt.Errorf("%s: range query [%d, %d) returned id %d", r.tr.coll, lo, hi, k)
		}
		if err := r.checkKey(k, true, val, v0, v1, "range query"); err != nil {
			return err
		}
	}
	for k := lo; k < hi; k++ {
		if _, ok := got[k]; ok {
			continue
		}
		if err := r.checkKey(k, false, 0, v0, v1, fmt.Sprintf("range query [%d, %d)", lo, hi)); err != nil {
			return err
		}
	}
	return nil
}

func (r *concReader) get(ctx context.Context) error {
	r.tr.mu.Lock()
	var keys []int64
	seen := map[int64]bool{}
	for i := 0; i < 30 && len(r.tr.keys) > 0; i++ {
		k := r.tr.keys[r.rng.IntN(len(r.tr.keys))]
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	v0 := r.tr.acked
	r.tr.mu.Unlock()
	if len(keys) == 0 {
		return nil
	}
	rs, err := r.c.Get(ctx, milvusclient.NewQueryOption(r.tr.coll).WithIDs(columnOfIDs(keys...)).
		WithOutputFields("id", "val").WithConsistencyLevel(entity.ClStrong))
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	v1 := r.end()
	got, err := rows(rs)
	if err != nil {
		return fmt.Errorf("%s: get: %w", r.tr.coll, err)
	}
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	for k := range got {
		if !seen[k] {
			return fmt.Errorf("%s: get of %v returned id %d", r.tr.coll, keys, k)
		}
	}
	for _, k := range keys {
		val, ok := got[k]
		if err := r.checkKey(k, ok, val, v0, v1, "get"); err != nil {
			return err
		}
	}
	return nil
}

func closeTo(a, b float32) bool {
	return math.Abs(float64(a-b)) <= 1e-4*math.Max(1, math.Abs(float64(b)))
}

func (r *concReader) search(ctx context.Context) error {
	q := make([]float32, concDim)
	for i := range q {
		q[i] = r.rng.Float32()*2 - 1
	}
	opt := milvusclient.NewSearchOption(r.tr.coll, concTopK, []entity.Vector{entity.FloatVector(q)}).
		WithANNSField("vec").WithOutputFields("val").WithConsistencyLevel(entity.ClStrong).
		WithSearchParam("metric_type", "L2")
	if !r.tr.exact {
		opt = opt.WithSearchParam("params", `{"ef": 64}`)
	}
	v0 := r.tr.start()
	res, err := r.c.Search(ctx, opt)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	v1 := r.end()
	if len(res) != 1 {
		return fmt.Errorf("%s: search of one vector returned %d result sets", r.tr.coll, len(res))
	}
	rs := res[0]
	r.tr.mu.Lock()
	defer r.tr.mu.Unlock()
	lo, _ := r.tr.sizeRange(v0, v1)
	if want := min(lo, concTopK); rs.ResultCount < want {
		return fmt.Errorf("%s: search returned %d hits, want %d (the collection held at least %d rows while the read ran)",
			r.tr.coll, rs.ResultCount, concTopK, lo)
	}
	hits := map[int64]bool{}
	vals := rs.GetColumn("val")
	for i := 0; i < rs.ResultCount; i++ {
		id, err := rs.IDs.GetAsInt64(i)
		if err != nil {
			return err
		}
		val, err := vals.GetAsInt64(i)
		if err != nil {
			return err
		}
		if hits[id] {
			return fmt.Errorf("%s: search returned id %d twice", r.tr.coll, id)
		}
		hits[id] = true
		if i > 0 && rs.Scores[i] < rs.Scores[i-1] {
			return fmt.Errorf("%s: search hits out of order: %v", r.tr.coll, rs.Scores)
		}
		if err := r.checkKey(id, true, val, v0, v1, "search"); err != nil {
			return err
		}
		if d := l2(q, concVec(id, val)); !closeTo(rs.Scores[i], d) {
			return fmt.Errorf("%s: search hit %d (val %d) has distance %v, its vector's is %v", r.tr.coll, id, val, rs.Scores[i], d)
		}
	}
	if !r.tr.exact || rs.ResultCount == 0 {
		return nil
	}
	worst := rs.Scores[rs.ResultCount-1]
	for _, k := range r.tr.keys {
		ss := r.tr.states(k, v0, v1)
		stable := ss[0].present
		for _, s := range ss[1:] {
			stable = stable && s.same(ss[0])
		}
		if !stable || hits[k] {
			continue
		}
		if d := l2(q, ss[0].vec); d < worst && !closeTo(d, worst) {
			return fmt.Errorf("%s: exact search missed key %d (val %d, distance %v, worst hit %v; versions %d..%d)",
				r.tr.coll, k, ss[0].val, d, worst, v0, v1)
		}
	}
	return nil
}

// segmentsOnce checks that the query node serves no segment twice.
func segmentsOnce(ctx context.Context, svc milvuspb.MilvusServiceClient, coll string) (int, error) {
	qs, err := svc.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{CollectionName: coll})
	if err == nil {
		err = merr.Error(qs.GetStatus())
	}
	if err != nil {
		return 0, fmt.Errorf("GetQuerySegmentInfo: %w", err)
	}
	seen := map[int64]bool{}
	for _, s := range qs.GetInfos() {
		if seen[s.GetSegmentID()] {
			return 0, fmt.Errorf("%s: the query node serves segment %d twice", coll, s.GetSegmentID())
		}
		seen[s.GetSegmentID()] = true
	}
	return len(seen), nil
}

// concFinal checks, with nothing running, that every read equals the final state.
func concFinal(t *testing.T, ctx context.Context, c *milvusclient.Client, tr *concTracker) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	require.Equal(t, tr.acked, tr.planned)
	want := map[int64]concState{}
	for k, h := range tr.hist {
		if s := h[len(h)-1]; s.present {
			want[k] = s
		}
	}
	require.Len(t, want, tr.sizes[tr.acked])

	rs, err := c.Query(ctx, milvusclient.NewQueryOption(tr.coll).WithOutputFields("count(*)").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.EqualValues(t, len(want), n, "%s: count(*)", tr.coll)

	got := map[int64]int64{}
	const chunk = 5000
	for lo := int64(0); lo < int64(len(tr.keys)); lo += chunk {
		rs, err := c.Query(ctx, milvusclient.NewQueryOption(tr.coll).
			WithFilter(fmt.Sprintf("id >= %d and id < %d", lo, lo+chunk)).WithOutputFields("id", "val").
			WithConsistencyLevel(entity.ClStrong))
		require.NoError(t, err)
		part, err := rows(rs)
		require.NoError(t, err, tr.coll)
		for k, v := range part {
			got[k] = v
		}
	}
	for k, s := range want {
		v, ok := got[k]
		require.True(t, ok, "%s: key %d (val %d) is missing", tr.coll, k, s.val)
		require.Equal(t, s.val, v, "%s: key %d", tr.coll, k)
	}
	require.Len(t, got, len(want), "%s: rows that should not exist", tr.coll)

	rng := rand.New(rand.NewPCG(uint64(len(want)), 1))
	for i := 0; i < 5; i++ {
		q := make([]float32, concDim)
		for j := range q {
			q[j] = rng.Float32()*2 - 1
		}
		opt := milvusclient.NewSearchOption(tr.coll, concTopK, []entity.Vector{entity.FloatVector(q)}).
			WithANNSField("vec").WithOutputFields("val").WithConsistencyLevel(entity.ClStrong).
			WithSearchParam("metric_type", "L2")
		if !tr.exact {
			opt = opt.WithSearchParam("params", `{"ef": 64}`)
		}
		res, err := c.Search(ctx, opt)
		require.NoError(t, err)
		rs := res[0]
		var ids []int64
		for j := 0; j < rs.ResultCount; j++ {
			id, err := rs.IDs.GetAsInt64(j)
			require.NoError(t, err)
			val, err := rs.GetColumn("val").GetAsInt64(j)
			require.NoError(t, err)
			require.Contains(t, want, id)
			require.Equal(t, want[id].val, val)
			require.True(t, closeTo(rs.Scores[j], l2(q, want[id].vec)), "%s: distance of %d", tr.coll, id)
			ids = append(ids, id)
		}
		require.Len(t, ids, min(concTopK, len(want)), "%s: search hits", tr.coll)
		if tr.exact {
			type hit struct {
				id int64
				d  float32
			}
			var all []hit
			for k, s := range want {
				all = append(all, hit{k, l2(q, s.vec)})
			}
			sort.Slice(all, func(i, j int) bool { return all[i].d < all[j].d })
			// Ties within float error may order differently; compare distances.
			for j, id := range ids {
				require.True(t, closeTo(l2(q, want[id].vec), all[j].d), "%s: exact search hit %d is %d, the %d-th nearest is %d",
					tr.coll, j, id, j, all[j].id)
			}
		}
	}
	_, err = segmentsOnce(ctx, c.GetService(), tr.coll)
	require.NoError(t, err)
}

func concSchema(name string) *entity.Schema {
	return entity.NewSchema().WithName(name).
		WithField(entity.NewField().WithName("id").WithDataType(entity.FieldTypeInt64).WithIsPrimaryKey(true)).
		WithField(entity.NewField().WithName("val").WithDataType(entity.FieldTypeInt64)).
		WithField(entity.NewField().WithName("vec").WithDataType(entity.FieldTypeFloatVector).WithDim(concDim))
}

func concWaitLoaded(t *testing.T, ctx context.Context, c *milvusclient.Client, coll string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
		if err == nil && st.State == entity.LoadStateLoaded {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s not loaded after restart: %v %v", coll, st, err)
		time.Sleep(50 * time.Millisecond)
	}
}

func TestConcurrentReadsDuringWrites(t *testing.T) {
	dir := t.TempDir()
	tweak := func(cfg *app.Config) {
		// ~300 rows of 48 bytes seal a segment; compaction merges any two
		// small ones; data nodes sync and checkpoint often.
		cfg.DataCoord.SegmentMaxSize = 128 << 10
		cfg.DataCoord.CheckInterval = 50 * time.Millisecond
		cfg.DataCoord.Compaction.MinSmallSegments = 2
		cfg.DataCoord.Compaction.L0Count = 2
		cfg.DataNode.SyncPeriod = 300 * time.Millisecond
		cfg.DataNode.CheckpointInterval = 100 * time.Millisecond
	}
	s := startServer(t, dir, tweak)
	c := s.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	svc := c.GetService()

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	trs := []*concTracker{newConcTracker("conc_hnsw", false, seed), newConcTracker("conc_flat", true, seed+1)}
	for _, tr := range trs {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(tr.coll, concSchema(tr.coll)).
			WithShardNum(concShards)))
		// The index exists before load (as Milvus requires); its builds and
		// attaches then run while segments seal, flush and compact.
		var idx index.Index = index.NewHNSWIndex(entity.L2, 8, 64)
		if tr.exact {
			idx = index.NewFlatIndex(entity.L2)
		}
		it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(tr.coll, "vec", idx))
		require.NoError(t, err)
		require.NoError(t, it.Await(ctx))
		indexAndLoad(ctx, t, c, tr.coll, entity.L2)
	}

	run, readers, maxKeys := 8*time.Second, 4, 15000
	if testing.Short() {
		run, readers, maxKeys = 3*time.Second, 2, 5000
	}
	wctx, stop := context.WithTimeout(ctx, run)
	defer stop()
	// Requests use ctx, not wctx: wctx only says when to stop, so that no
	// request is cut (a cut write would leave its outcome unknown).
	var failed atomic.Bool
	fail := func(err error) {
		if failed.CompareAndSwap(false, true) {
			t.Error(err)
		}
		stop()
	}
	var wg sync.WaitGroup
	for _, tr := range trs {
		wg.Go(func() {
			for wctx.Err() == nil {
				if err := tr.step(ctx, svc, maxKeys); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	var flushes, compactions, plans atomic.Int64
	wg.Go(func() { // flusher
		rng := rand.New(rand.NewPCG(seed, 2))
		for wctx.Err() == nil {
			time.Sleep(time.Duration(150+rng.IntN(300)) * time.Millisecond)
			tr := trs[rng.IntN(len(trs))]
			ft, err := c.Flush(ctx, milvusclient.NewFlushOption(tr.coll))
			if err == nil && rng.IntN(2) == 0 {
				err = ft.Await(ctx)
			}
			if err != nil {
				fail(fmt.Errorf("flush %s: %w", tr.coll, err))
				return
			}
			flushes.Add(1)
		}
	})
	wg.Go(func() { // compactor
		rng := rand.New(rand.NewPCG(seed, 3))
		for wctx.Err() == nil {
			time.Sleep(time.Duration(300+rng.IntN(500)) * time.Millisecond)
			tr := trs[rng.IntN(len(trs))]
			resp, err := svc.ManualCompaction(ctx, &milvuspb.ManualCompactionRequest{CollectionName: tr.coll})
			if err == nil {
				err = merr.Error(resp.GetStatus())
			}
			if err != nil {
				fail(fmt.Errorf("compact %s: %w", tr.coll, err))
				return
			}
			compactions.Add(1)
			plans.Add(int64(resp.GetCompactionPlanCount()))
		}
	})
	var reads atomic.Int64
	for i := 0; i < readers; i++ {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(10+i)))
			for wctx.Err() == nil {
				r := &concReader{c: c, tr: trs[rng.IntN(len(trs))], rng: rng}
				var err error
				switch rng.IntN(5) {
				case 0:
					err = r.count(ctx)
				case 1:
					err = r.rangeQuery(ctx)
				case 2:
					err = r.get(ctx)
				case 3:
					err = r.search(ctx)
				default:
					_, err = segmentsOnce(ctx, svc, r.tr.coll)
				}
				if err != nil {
					fail(err)
					return
				}
				reads.Add(1)
			}
		})
	}
	wg.Wait()
	require.False(t, failed.Load())
	for _, tr := range trs {
		n, err := segmentsOnce(ctx, svc, tr.coll)
		require.NoError(t, err)
		t.Logf("%s: %d requests %v, %d live rows, %d keys, %d segments served", tr.coll, tr.acked, tr.ops,
			tr.sizes[tr.acked], len(tr.keys), n)
	}
	t.Logf("%d reads checked, %d flushes, %d manual compactions with %d plans", reads.Load(), flushes.Load(),
		compactions.Load(), plans.Load())

	restart := func() {
		s.stop()
		s = startServer(t, dir, tweak)
		c = s.client(t)
		svc = c.GetService()
		for _, tr := range trs {
			concWaitLoaded(t, ctx, c, tr.coll)
		}
	}
	for _, tr := range trs {
		concFinal(t, ctx, c, tr)
	}
	// After a restart with rows still in growing segments.
	restart()
	for _, tr := range trs {
		concFinal(t, ctx, c, tr)
	}
	// Flush and compact everything, then check again: every row is now in
	// flushed or compacted segments.
	for _, tr := range trs {
		ft, err := c.Flush(ctx, milvusclient.NewFlushOption(tr.coll))
		require.NoError(t, err)
		require.NoError(t, ft.Await(ctx))
		waitCompaction(t, ctx, svc, tr.coll)
		concFinal(t, ctx, c, tr)
	}

	restart()
	for _, tr := range trs {
		concFinal(t, ctx, c, tr)
	}
}
