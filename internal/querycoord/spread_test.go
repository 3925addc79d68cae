package querycoord_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querycoord"
)

// newSpreadCluster is a cluster whose coordinator spreads sealed segments
// over each replica's nodes, with two query nodes (in process, or reached
// over queryrpc, which they also reach each other over); the stack's
// collection (one shard) is not loaded through it yet.
func newSpreadCluster(t *testing.T, remote bool) (*cluster, int64, int64) {
	c := newClusterWith(t, func(cfg *querycoord.Config) { cfg.SpreadSegments = true })
	add := c.addLocal
	if remote {
		add = c.addRemote
	}
	a, b := add(), add()
	require.NoError(t, c.s.QueryNode.Load(context.Background(), c.s.CollectionID, nil, 1, nil)) // the reference
	return c, a, b
}

// spreadReads are reads of the stack's collection the coordinator must
// answer as the reference node (holding everything) does. No two rows are
// at the same distance from a query vector: which of two tied hits a node
// keeps at the TopK boundary depends on the order it reads its segments.
func spreadReads(id, vec int64) (map[string]*plan.Search, map[string]*plan.Query) {
	read := plan.Read{CollectionID: id, Strong: true}
	filtered := read
	filtered.Filter = "id % 3 == 1 or id > 230"
	searches := map[string]*plan.Search{
		"top-k":   {Read: read, FieldID: vec, Metric: "L2", Vectors: [][]float32{{3.3, 1}, {77.4, 1}, {151.2, 1}, {240.7, 1}}, TopK: 12},
		"filter":  {Read: filtered, FieldID: vec, Metric: "L2", Vectors: [][]float32{{60.3, 1}}, TopK: 20},
		"outputs": {Read: plan.Read{CollectionID: id, Strong: true, OutputFields: []int64{100, vec}}, FieldID: vec, Metric: "L2", Vectors: [][]float32{{99.6, 1}}, TopK: 7},
		"range":   {Read: read, FieldID: vec, Metric: "L2", Vectors: [][]float32{{120.4, 1}}, TopK: 50, HasRadius: true, Radius: 30},
	}
	keys := read
	keys.OutputFields = []int64{100}
	page := filtered
	page.OutputFields = []int64{100, vec}
	queries := map[string]*plan.Query{
		"count":        {Read: read, CountOnly: true},
		"count-filter": {Read: filtered, CountOnly: true},
		"keys":         {Read: keys},
		"page":         {Read: page, Offset: 9, Limit: 25},
	}
	return searches, queries
}

// sameAsReference requires the coordinator's answers to every spreadReads
// read to be the reference node's; with ignoreGrowing (only while no
// segment is being handed off: when a handoff happens differs between
// nodes) also a search of the sealed segments only.
func sameAsReference(t *testing.T, c *cluster, ignoreGrowing bool) {
	t.Helper()
	ctx := context.Background()
	col, err := c.s.Root.CollectionByID(c.s.CollectionID)
	require.NoError(t, err)
	vec := col.Field("vec").GetFieldID()
	searches, queries := spreadReads(col.ID, vec)
	if ignoreGrowing {
		searches["ignore-growing"] = &plan.Search{
			Read: plan.Read{CollectionID: col.ID, Strong: true, IgnoreGrowing: true}, FieldID: vec, Metric: "L2",
			Vectors: [][]float32{{250.2, 1}}, TopK: 5,
		}
	}
	for name, req := range searches {
		want, err := c.s.QueryNode.Search(ctx, req)
		require.NoError(t, err, name)
		got, err := c.coord.Search(ctx, req)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
	for name, req := range queries {
		want, err := c.s.QueryNode.Query(ctx, req)
		require.NoError(t, err, name)
		got, err := c.coord.Query(ctx, req)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
}

// referenceHandedOff waits until the reference node serves exactly that
// many growing segments of the stack's collection (it handed the flushed
// ones off): when a handoff happens differs between nodes, and reads of
// the sealed segments only depend on it.
func (c *cluster) referenceHandedOff(growing int) {
	c.t.Helper()
	require.Eventually(c.t, func() bool {
		n := 0
		segs, err := c.s.QueryNode.Segments(context.Background(), c.s.CollectionID)
		require.NoError(c.t, err)
		for _, sg := range segs {
			if sg.Growing {
				n++
			}
		}
		return n == growing
	}, 10*time.Second, 10*time.Millisecond)
}

// held returns the sealed segments of the stack's collection each node
// serves as a worker.
func (c *cluster) held(ids ...int64) map[int64][]int64 {
	return c.heldOf(c.s.CollectionID, ids...)
}

// heldOf returns the sealed segments of a collection each node serves as
// a worker.
func (c *cluster) heldOf(collectionID int64, ids ...int64) map[int64][]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[int64][]int64{}
	for _, id := range ids {
		for _, segs := range c.nodes[id].node.WorkerSegments(collectionID) {
			out[id] = append(out[id], segs...)
		}
	}
	return out
}

// TestSpreadSegmentsAnswersAsOneNode: with one shard and two nodes, the
// sealed segments are split by rows between the shard leader and the
// other node (a worker), and every search and query (count(*) included)
// answers as one node holding everything does; a release drops the
// worker's segments. The nodes run in process, then over queryrpc.
func TestSpreadSegmentsAnswersAsOneNode(t *testing.T) {
	t.Run("in-process", func(t *testing.T) { spreadAnswersAsOneNode(t, false) })
	t.Run("queryrpc", func(t *testing.T) { spreadAnswersAsOneNode(t, true) })
}

func spreadAnswersAsOneNode(t *testing.T, remote bool) {
	c, a, b := newSpreadCluster(t, remote)
	s := c.s
	for i := range int64(4) {
		s.Insert(i*50, i*50+50)
		s.Flush()
	}
	s.Insert(200, 260) // growing
	s.Delete(10, 15)   // sealed rows
	s.Delete(120, 122)
	s.Delete(250, 251) // a growing row
	ctx := context.Background()
	require.NoError(t, c.coord.Load(ctx, s.CollectionID, nil, 1, nil))

	reps, err := c.coord.Replicas(ctx, s.CollectionID)
	require.NoError(t, err)
	require.Len(t, reps, 1)
	leader := reps[0].Leaders[s.VChannels[0]]
	worker := a
	if leader == a {
		worker = b
	}
	held := c.held(a, b)
	require.Empty(t, held[leader], "the leader is no worker of its own shard")
	require.NotEmpty(t, held[worker], "the worker serves sealed segments")
	c.mu.Lock()
	leaderNode := c.nodes[leader].node
	c.mu.Unlock()
	sealed, err := leaderNode.Sealed(s.CollectionID, s.VChannels[0])
	require.NoError(t, err)
	var own, given int64
	for _, sg := range sealed {
		if len(sg.NodeIDs) > 0 {
			require.Equal(t, []int64{worker}, sg.NodeIDs)
			given += sg.Rows
		} else {
			own += sg.Rows
		}
	}
	require.Equal(t, int64(200), own+given)
	require.Positive(t, own)
	require.Positive(t, given)
	c.referenceHandedOff(1)
	sameAsReference(t, c, true)

	segs, err := c.coord.Segments(context.Background(), s.CollectionID)
	require.NoError(t, err)
	nodesOf := map[int64][]int64{}
	for _, sg := range segs {
		nodesOf[sg.ID] = sg.NodeIDs
	}
	for _, id := range held[worker] {
		require.Equal(t, []int64{worker}, nodesOf[id], "segment %d is listed on its worker", id)
	}

	c.coord.Release(s.CollectionID)
	require.Empty(t, c.held(a, b), "a release drops the workers' segments")
}

// TestSpreadSegmentsExactWhileMoving: while rows are inserted and deleted,
// segments flushed (handed off on the leader, then given to the worker by
// the coordinator's loop) and compacted (the leader serves the output, the
// worker's inputs are dropped), every count(*) read concurrently counts a
// state the collection was in during the read (no row twice, none
// missing), and every read after an acknowledged write answers as the
// reference node does.
func TestSpreadSegmentsExactWhileMoving(t *testing.T) {
	c, a, b := newSpreadCluster(t, false)
	s := c.s
	s.Insert(0, 100)
	s.Flush()
	ctx := context.Background()
	require.NoError(t, c.coord.Load(ctx, s.CollectionID, nil, 1, nil))

	var mu sync.Mutex
	states := []int64{100} // count(*) after each write; the last may be in flight
	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				mu.Lock()
				from := max(len(states)-2, 0)
				mu.Unlock()
				res, err := c.coord.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, CountOnly: true})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				valid := append([]int64(nil), states[from:]...)
				mu.Unlock()
				found := false
				for _, v := range valid {
					found = found || v == res.Count
				}
				if !found {
					errs <- &countError{got: res.Count, valid: valid}
					return
				}
				reads.Add(1)
			}
		})
	}
	next := int64(100)
	write := func(delta int64, op func()) {
		mu.Lock()
		states = append(states, states[len(states)-1]+delta)
		mu.Unlock()
		op()
	}
	workerSegs := 0 // the most segments workers held at once
	for round := range int64(12) {
		lo := next
		write(37, func() { s.Insert(lo, lo+37) })
		next += 37
		write(-5, func() { s.Delete(lo+3, lo+8) })
		if round%3 == 2 {
			s.Flush()
		}
		if round == 7 {
			s.Compact()
		}
		sameAsReference(t, c, false)
		held := c.held(a, b)
		workerSegs = max(workerSegs, len(held[a])+len(held[b]))
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, reads.Load())
	require.Positive(t, workerSegs, "segments were spread while writing")
	t.Logf("%d concurrent count(*) reads; up to %d segments on the worker", reads.Load(), workerSegs)
	// Once the loop placed the last flushes, both nodes serve sealed rows
	// and the answers are still the reference's.
	s.Flush()
	require.Eventually(t, func() bool {
		held := c.held(a, b)
		return len(held[a])+len(held[b]) > 0
	}, 10*time.Second, 20*time.Millisecond)
	sameAsReference(t, c, false)
	res, err := c.coord.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true, OutputFields: []int64{100}}})
	require.NoError(t, err)
	keys := res.Fields[100].(*column.Ints).Data
	require.Len(t, keys, int(states[len(states)-1]))
}

// countError is a count(*) that matches no state of the collection during
// the read.
type countError struct {
	got   int64
	valid []int64
}

func (e *countError) Error() string {
	return fmt.Sprintf("count(*) %d is no state the collection was in during the read: %v", e.got, e.valid)
}

// TestSpreadSegmentsHeal: with three nodes (a leader and two workers),
// reads stay exact or fail with 503 while a worker dies and its segments
// move to the live nodes, and again while the leader dies and a worker
// takes its shard over; after each heal every read answers as the
// reference node does and the sealed segments are spread again.
func TestSpreadSegmentsHeal(t *testing.T) {
	c, a, b := newSpreadCluster(t, false)
	d := c.addLocal()
	s := c.s
	for i := range int64(6) {
		s.Insert(i*40, i*40+40)
		s.Flush()
	}
	s.Insert(240, 260)
	s.Delete(5, 9)
	ctx := context.Background()
	require.NoError(t, c.coord.Load(ctx, s.CollectionID, nil, 1, nil))
	c.referenceHandedOff(1)
	want, err := s.QueryNode.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, CountOnly: true})
	require.NoError(t, err)
	leaderOf := func() int64 {
		reps, err := c.coord.Replicas(ctx, s.CollectionID)
		require.NoError(t, err)
		return reps[0].Leaders[s.VChannels[0]]
	}
	leader := leaderOf()
	held := c.held(a, b, d)
	var workers []int64
	for _, n := range []int64{a, b, d} {
		if n != leader {
			require.NotEmpty(t, held[n], "node %d is a worker", n)
			workers = append(workers, n)
		}
	}
	sameAsReference(t, c, true)

	// healed waits until reads succeed again: meanwhile each count(*) is
	// the reference's or fails with 503.
	healed := func(gone int64) {
		t.Helper()
		require.Eventually(t, func() bool {
			res, err := c.coord.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: s.CollectionID, Strong: true}, CountOnly: true})
			if err != nil {
				require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
				return false
			}
			require.Equal(t, want.Count, res.Count, "count(*) while node %d is healed out", gone)
			return true
		}, 30*time.Second, 10*time.Millisecond)
		sameAsReference(t, c, true)
	}
	c.kill(workers[0])
	healed(workers[0])
	require.Eventually(t, func() bool { return len(c.held(leaderOf(), workers[1])[workers[1]]) > 0 }, 10*time.Second, 10*time.Millisecond)

	c.kill(leader)
	healed(leader)
	require.Equal(t, workers[1], leaderOf(), "the last node leads")
	require.Empty(t, c.held(workers[1]), "a leader serves its own shard's segments itself")
}

// TestSpreadSegmentsEveryReadShape: the two-shard collection of the
// placement tests (grouped searches, iterators, range searches, queries
// with offsets) on three nodes, two leading a shard each and the third
// serving sealed segments for them, answers every search and query as the
// reference node does.
func TestSpreadSegmentsEveryReadShape(t *testing.T) {
	c := newClusterWith(t, func(cfg *querycoord.Config) { cfg.SpreadSegments = true })
	c.prepare()
	// More sealed segments: 120-199, then keys far from every query
	// vector (none ties with another at a TopK boundary).
	c.flush()
	c.insert(1000, 1060)
	c.flush()
	c.insert(2000, 2010)
	a, b, d := c.addLocal(), c.addLocal(), c.addRemote()
	ok(t, c.load(1), nil)
	held := c.heldOf(c.collectionID(), a, b, d)
	require.NotEmpty(t, held, "a node serves segments for another's shard")
	c.same()
}
