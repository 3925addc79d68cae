package querynode_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/stacktest"
)

// guard bounds a wait that only a bug makes long (a deadlock): it is not a
// latency threshold.
const guard = 30 * time.Second

// second creates collection "second" (the stack's schema) with rows keys
// [0, rows) flushed to binlogs, and returns its ID and segments.
func second(t *testing.T, s *stacktest.Stack, rows int64) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	col := s.CreateCollection("second")
	s.InsertRows("second", 0, rows)
	ids, ts, err := s.Data.Flush(ctx, col.ID, col.VChannels)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	s.RunDataNode(s.NewDataNode(), func() bool { return s.FlushState(ids, col.VChannels, ts) })
	return col.ID, ids
}

// search searches the stack's collection for its nearest neighbour of (0, 1).
func search(ctx context.Context, s *stacktest.Stack, collectionID int64) (*plan.SearchResult, error) {
	return s.QueryNode.Search(ctx, &plan.Search{
		Read:    plan.Read{CollectionID: collectionID, Strong: true},
		FieldID: 101, Metric: "L2", Vectors: [][]float32{{0, 1}}, TopK: 3,
	})
}

// loadAsync starts a Load and returns its result channel.
func loadAsync(s *stacktest.Stack, collectionID int64) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.QueryNode.Load(context.Background(), collectionID, nil, 0, nil) }()
	return done
}

// waitHeld waits until a load waits at the object-storage gate.
func waitHeld(t *testing.T, held <-chan struct{}, loaded <-chan error) {
	t.Helper()
	select {
	case <-held:
	case err := <-loaded:
		t.Fatalf("loaded without reading binlogs: %v", err)
	}
}

// A load reads its sealed segments without the node's lock: while
// collection B's load waits on slow object storage, a search of the loaded
// collection A answers (it used to wait for B's load to end).
func TestSearchServesWhileAnotherCollectionLoads(t *testing.T) {
	s := stacktest.New(t)
	aSegs := s.Flush()
	s.Insert(0, 50)
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	b, _ := second(t, s, 80)

	release, held := s.QNObjects.Hold(aSegs...) // B's binlogs are slow to read
	defer release()
	loaded := loadAsync(s, b)
	waitHeld(t, held, loaded) // B's load is reading its binlogs

	searched := make(chan error, 1)
	go func() {
		res, err := search(context.Background(), s, s.CollectionID)
		if err == nil && (len(res.Hits) != 1 || len(res.Hits[0]) == 0) {
			err = errors.New("no hits")
		}
		searched <- err
	}()
	select {
	case err := <-searched:
		require.NoError(t, err)
	case err := <-loaded:
		t.Fatalf("B's load ended (%v) before the search of A answered", err)
	case <-time.After(guard):
		t.Fatal("the search of A waited for the load of B")
	}
	require.EqualValues(t, 50, s.Count(), "A counts while B loads")
	ok, _, _ := s.QueryNode.Loaded(context.Background(), b)
	require.False(t, ok, "B is not loaded before its load ends")
	loading, err := s.QueryNode.Loading(context.Background(), b)
	require.NoError(t, err)
	require.True(t, loading, "B's load is in progress")
	ls, err := s.Proxy.GetLoadState(context.Background(), &milvuspb.GetLoadStateRequest{CollectionName: "second"})
	require.NoError(t, err)
	require.Equal(t, commonpb.LoadState_LoadStateLoading, ls.GetState(), "GetLoadState of B during its load")
	_, err = search(context.Background(), s, b)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "a read of B during its load: %v", err)
	select {
	case err := <-loaded:
		t.Fatalf("B's load ended (%v) while its binlogs were held", err)
	default:
	}

	release()
	require.NoError(t, <-loaded)
	loading, err = s.QueryNode.Loading(context.Background(), b)
	require.NoError(t, err)
	require.False(t, loading, "B's load has ended")
	res, err := s.QueryNode.Query(context.Background(), &plan.Query{Read: plan.Read{CollectionID: b, Strong: true}, CountOnly: true})
	require.NoError(t, err)
	require.EqualValues(t, 80, res.Count)
}

// A Release during a load wins: it returns without waiting for the load,
// the load fails with 101 and leaves nothing loaded, and it is not a load
// failure.
func TestReleaseDuringLoadWins(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 30)
	s.Flush()
	release, held := s.QNObjects.Hold()
	defer release()
	loaded := loadAsync(s, s.CollectionID)
	waitHeld(t, held, loaded)

	released := make(chan struct{})
	go func() {
		s.QueryNode.Release(s.CollectionID)
		close(released)
	}()
	select {
	case <-released:
	case <-time.After(guard):
		t.Fatal("Release waited for the load")
	}
	err := <-loaded // the load's reads are cancelled
	require.Error(t, err)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "released while loading")
	ok, _, _ := s.QueryNode.Loaded(context.Background(), s.CollectionID)
	require.False(t, ok)
	require.NoError(t, loadFailure(t, s))

	release()
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil), "a load after the release is a new load")
	require.EqualValues(t, 30, s.Count())
}

// Two Loads of a collection that is loading are one load: the second waits
// for the first (it does not report a load that is not done) and both end
// with the collection served once.
func TestDoubleLoadIsOneLoad(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 30)
	ids := s.Flush()
	release, held := s.QNObjects.Hold()
	defer release()
	first := loadAsync(s, s.CollectionID)
	waitHeld(t, held, first)
	secondLoad := loadAsync(s, s.CollectionID)
	select {
	case err := <-secondLoad:
		t.Fatalf("the second Load returned (%v) before the first was done", err)
	case err := <-first:
		t.Fatalf("the first Load returned (%v) while its binlogs were held", err)
	default:
	}
	release()
	require.NoError(t, <-first)
	require.NoError(t, <-secondLoad)
	served := s.Served()
	require.Len(t, served, len(ids), "%v", served)
	require.EqualValues(t, 30, s.Count())
}

// A delegator that stops on an error (its WAL consumer fails) stops its
// collection at once: a read waiting on it and every later read fail with
// 503 "channel not available", LoadFailure and Problems say why, and the
// node's other collections serve on.
func TestStoppedDelegatorFailsItsCollection(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 40)
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	b, _ := second(t, s, 10)
	require.NoError(t, s.QueryNode.Load(context.Background(), b, nil, 0, nil))

	// A read whose guarantee no tick reaches waits on the delegator.
	waiting := make(chan error, 1)
	go func() {
		_, err := s.QueryNode.Query(context.Background(), &plan.Query{
			Read: plan.Read{CollectionID: s.CollectionID, GuaranteeTS: ^uint64(0) >> 1}, CountOnly: true,
		})
		waiting <- err
	}()
	cause := errors.New("wal: injected read failure")
	require.True(t, querynode.AbortDelegators(s.QueryNode, s.CollectionID, cause))
	select {
	case err := <-waiting:
		require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
		require.Contains(t, err.Error(), cause.Error())
	case <-time.After(guard):
		t.Fatal("a read of the stopped collection waited")
	}

	_, err := search(context.Background(), s, s.CollectionID)
	require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "channel not available[channel="+s.VChannels[0]+"]")
	require.Contains(t, err.Error(), cause.Error())
	require.ErrorContains(t, loadFailure(t, s), cause.Error())
	ls, err := s.Proxy.GetLoadState(context.Background(), &milvuspb.GetLoadStateRequest{CollectionName: stacktest.Collection})
	require.NoError(t, err)
	require.Equal(t, commonpb.LoadState_LoadStateNotLoad, ls.GetState())
	require.Equal(t, errcode.CollectionNotLoaded, ls.GetStatus().GetCode(), "GetLoadState says why")
	require.Contains(t, ls.GetStatus().GetReason(), cause.Error())
	var subjects []string
	for _, p := range s.QueryNode.Problems() {
		subjects = append(subjects, p.Subject+": "+p.Reason)
	}
	require.Contains(t, subjects, "collection "+stacktest.Collection+": stopped serving: querynode: vchannel "+
		s.VChannels[0]+": "+cause.Error())
	ok, _, _ := s.QueryNode.Loaded(context.Background(), s.CollectionID)
	require.False(t, ok)

	res, err := s.QueryNode.Query(context.Background(), &plan.Query{Read: plan.Read{CollectionID: b, Strong: true}, CountOnly: true})
	require.NoError(t, err, "the other collection serves")
	require.EqualValues(t, 10, res.Count)

	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil), "loading it again")
	require.NoError(t, loadFailure(t, s))
	require.EqualValues(t, 40, s.Count())
}

// Run owns the node's goroutines: when its context ends it stops every
// collection's delegators, waits for them and returns; loads are refused
// after (goleak in TestMain checks nothing is left running).
func TestRunStopsTheNode(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 5)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- s.QueryNode.Run(ctx) }()
	require.NoError(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil))
	require.EqualValues(t, 5, s.Count())
	cancel()
	require.NoError(t, <-ran)
	ok, _, _ := s.QueryNode.Loaded(context.Background(), s.CollectionID)
	require.False(t, ok)
	require.Error(t, s.QueryNode.Load(context.Background(), s.CollectionID, nil, 0, nil), "a stopped node loads nothing")
}

// While a load attaches its sealed segments, GetLoadingProgress grows with
// each one attached, GetLoadState says Loading, the node lists the
// collection as loading, and a read is refused with 101 (not answered
// from the segments attached so far); once every segment is attached and
// the WAL replayed, the progress is 100 and a read sees every row.
func TestLoadProgressCountsSealedSegments(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 10)
	first := s.Flush()
	s.Insert(10, 20)
	secondSegs := s.Flush()
	s.Insert(20, 30)
	s.Flush()
	s.Insert(30, 35) // growing: replayed from the WAL
	// The third segment's reads wait.
	release, held := s.QNObjects.Hold(append(first, secondSegs...)...)
	defer release()
	loaded := loadAsync(s, s.CollectionID)
	waitHeld(t, held, loaded)

	progress := func() int64 {
		p, err := s.Proxy.GetLoadingProgress(context.Background(), &milvuspb.GetLoadingProgressRequest{CollectionName: stacktest.Collection})
		require.NoError(t, err)
		require.Zero(t, p.GetStatus().GetCode(), "GetLoadingProgress while loading: %v", p.GetStatus())
		return p.GetProgress()
	}
	// Two of the three segments attach; the third is held.
	require.Eventually(t, func() bool { return progress() == 60 }, guard, 10*time.Millisecond,
		"progress with two of three segments attached")
	require.Equal(t, []string{stacktest.Collection}, s.QueryNode.LoadingCollections())
	show, err := s.Proxy.ShowCollections(context.Background(), &milvuspb.ShowCollectionsRequest{})
	require.NoError(t, err)
	require.Equal(t, []int64{60}, show.GetInMemoryPercentages(), "ShowCollections while loading")
	require.Equal(t, []bool{false}, show.GetQueryServiceAvailable())
	ls, err := s.Proxy.GetLoadState(context.Background(), &milvuspb.GetLoadStateRequest{CollectionName: stacktest.Collection})
	require.NoError(t, err)
	require.Equal(t, commonpb.LoadState_LoadStateLoading, ls.GetState())
	_, err = search(context.Background(), s, s.CollectionID)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "a read while loading: %v", err)
	require.ErrorContains(t, err, "still loading (60%)")

	release()
	require.NoError(t, <-loaded)
	require.EqualValues(t, 100, progress())
	require.Empty(t, s.QueryNode.LoadingCollections())
	require.EqualValues(t, 35, s.Count())
}

// LoadAll (a restart's reload) registers every collection as loading
// before it returns, so that no read or GetLoadState between the start
// and the load sees it not loaded or half loaded; the loads end in the
// background and the channel closes once they have.
func TestLoadAllRegistersBeforeReturning(t *testing.T) {
	s := stacktest.New(t)
	s.Insert(0, 40)
	s.Flush()
	s.Insert(40, 45)
	b, _ := second(t, s, 20)
	release, _ := s.QNObjects.Hold() // every sealed segment waits
	defer release()
	done := s.QueryNode.LoadAll(context.Background(), []querynode.LoadRequest{{CollectionID: s.CollectionID}, {CollectionID: b}}, 1)

	require.ElementsMatch(t, []string{stacktest.Collection, "second"}, s.QueryNode.LoadingCollections())
	for _, name := range []string{stacktest.Collection, "second"} {
		ls, err := s.Proxy.GetLoadState(context.Background(), &milvuspb.GetLoadStateRequest{CollectionName: name})
		require.NoError(t, err)
		require.Equal(t, commonpb.LoadState_LoadStateLoading, ls.GetState(), name)
	}
	_, err := search(context.Background(), s, s.CollectionID)
	require.Equal(t, errcode.CollectionNotLoaded, errcode.CodeOf(err), "a read while reloading: %v", err)
	require.ErrorContains(t, err, "still loading")
	select {
	case <-done:
		t.Fatal("LoadAll ended while the segments were held")
	default:
	}

	release()
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("LoadAll did not end")
	}
	require.Empty(t, s.QueryNode.LoadingCollections())
	for _, id := range []int64{s.CollectionID, b} {
		ok, _, _ := s.QueryNode.Loaded(context.Background(), id)
		require.True(t, ok)
	}
	require.EqualValues(t, 45, s.Count())
}

// A ReleasePartitions while the collection is loading (as after a
// restart) waits for the load and then releases: the partition does not
// come back loaded when the load ends.
func TestReleasePartitionsWaitsForLoad(t *testing.T) {
	s := stacktest.New(t)
	s.CreatePartition("p")
	s.Insert(0, 10)
	s.InsertInto("p", 10, 30)
	s.Flush()
	release, held := s.QNObjects.Hold()
	defer release()
	loaded := loadAsync(s, s.CollectionID)
	waitHeld(t, held, loaded)

	type result struct {
		st  *commonpb.Status
		err error
	}
	released := make(chan result, 1)
	go func() {
		st, err := s.Proxy.ReleasePartitions(context.Background(), &milvuspb.ReleasePartitionsRequest{
			CollectionName: stacktest.Collection, PartitionNames: []string{"p"},
		})
		released <- result{st, err}
	}()
	release()
	require.NoError(t, <-loaded)
	select {
	case r := <-released:
		require.NoError(t, r.err)
		require.Zero(t, r.st.GetCode(), "%v", r.st)
	case <-time.After(guard):
		t.Fatal("ReleasePartitions did not return")
	}
	ok, parts, _ := s.QueryNode.Loaded(context.Background(), s.CollectionID)
	require.True(t, ok, "the default partition stays loaded")
	require.NotNil(t, parts)
	require.EqualValues(t, 10, s.Count(), "only the default partition's rows")
}

// TestLoadVChannels: a node loads some of a collection's vchannels (a shard
// leader of a replica) and serves only their rows; another subset replaces
// the loaded one while it serves (reads of a vchannel both hold never
// fail); a read restricted to vchannels counts theirs only, and one naming
// a vchannel the node does not serve gets "channel not available"; a
// vchannel of another collection is refused.
func TestLoadVChannels(t *testing.T) {
	s := stacktest.NewWith(t, stacktest.Options{PChannels: 2})
	ctx := context.Background()
	col := s.CreateSharded("two", 2)
	require.Len(t, col.VChannels, 2)
	s.InsertRows("two", 0, 100)
	qn := s.QueryNode

	err := qn.LoadVChannels(ctx, col.ID, nil, []string{s.VChannels[0]})
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err), "a vchannel of another collection: %v", err)

	require.NoError(t, qn.LoadVChannels(ctx, col.ID, nil, col.VChannels[:1]))
	require.Equal(t, col.VChannels[:1], qn.VChannels(col.ID))
	count := func() int64 {
		res, err := qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: col.ID, Strong: true}, CountOnly: true})
		require.NoError(t, err)
		return res.Count
	}
	first := count()
	require.Positive(t, first)
	require.Less(t, first, int64(100), "only the rows of the first shard")
	require.NoError(t, qn.LoadVChannels(ctx, col.ID, []int64{}, col.VChannels[:1]), "the same subset again")
	countOf := func(vchannels []string) (int64, error) {
		res, err := qn.Query(ctx, &plan.Query{Read: plan.Read{CollectionID: col.ID, Strong: true, VChannels: vchannels}, CountOnly: true})
		if err != nil {
			return 0, err
		}
		return res.Count, nil
	}

	// Both shards replace the first while it serves: reads of the first
	// shard go on through the swap.
	var stop atomic.Bool
	readErr := make(chan error, 1)
	go func() {
		for !stop.Load() {
			n, err := countOf(col.VChannels[:1])
			if err == nil && n != first {
				err = fmt.Errorf("count %d during the swap, want %d", n, first)
			}
			if err != nil {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()
	require.NoError(t, qn.LoadVChannels(ctx, col.ID, nil, col.VChannels))
	stop.Store(true)
	require.NoError(t, <-readErr)
	require.Equal(t, int64(100), count())
	second, err := countOf(col.VChannels[1:])
	require.NoError(t, err)
	require.Equal(t, int64(100)-first, second, "a read of the second shard only")

	// The second shard alone: the first is not served any more.
	require.NoError(t, qn.LoadVChannels(ctx, col.ID, nil, col.VChannels[1:]))
	require.Equal(t, col.VChannels[1:], qn.VChannels(col.ID))
	require.Equal(t, int64(100)-first, count(), "the other shard's rows")
	_, err = countOf(col.VChannels[:1])
	require.Equal(t, errcode.ChannelNotAvailable, errcode.CodeOf(err), "%v", err)
	qn.Release(col.ID)
	require.NoError(t, qn.LoadVChannels(ctx, col.ID, nil, col.VChannels), "every vchannel: the whole collection")
	require.Equal(t, int64(100), count())
	require.Equal(t, col.VChannels, qn.VChannels(col.ID))
	require.NoError(t, qn.Load(ctx, col.ID, nil, 2, nil), "a plain load of the whole collection joins it")
}

// loadFailure is the node's LoadFailure of the stack's collection (the
// in-process node always answers).
func loadFailure(t *testing.T, s *stacktest.Stack) error {
	t.Helper()
	failure, err := s.QueryNode.LoadFailure(context.Background(), s.CollectionID)
	require.NoError(t, err)
	return failure
}
