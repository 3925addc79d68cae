// Package stacktest assembles Strata's real components in one process for
// tests of one component against the others: meta store, TSO, WAL, root
// and data coordinators, query node and proxy, over a temporary data
// directory. Nothing runs in the background: a test starts the data node
// (and the compactor) only for the steps it chooses, so the order of
// events around a load, a sync or a restart is fixed exactly. Hooks on
// what the query node sees of the data coordinator and of object storage
// let a step happen at a chosen point of a load. Only tests import it.
package stacktest

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/datanode"
	"github.com/strata-db/strata/internal/metastore/embedded"
	objlocal "github.com/strata-db/strata/internal/objstore/local"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/querynode"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/tso"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// Collection is the name of the collection New creates: an Int64 primary
// key "id" and a 2-dimensional FloatVector "vec", one shard.
const Collection = "stack"

// Stack is the in-process stack.
type Stack struct {
	T       *testing.T
	Dir     string
	Log     *local.Log
	Objects *objlocal.Store
	IDs     *tso.Allocator
	Root    *rootcoord.Core
	Data    *datacoord.Coordinator
	Proxy   *proxy.Proxy
	// QueryNode reads the data coordinator through QNSegments and object
	// storage through QNObjects.
	QueryNode  *querynode.Node
	QNSegments *HookedSegments
	QNObjects  *HookedObjects
	// DataNodeConfig configures the data nodes NewDataNode returns.
	DataNodeConfig datanode.Config
	// CollectionID and VChannels describe Collection.
	CollectionID int64
	VChannels    []string

	closers []func() error // what open opened, closed by Reopen and at cleanup
	opts    Options
	writer  *wal.Writer
	clock   *tso.Allocator
	pins    *wal.Pins
	qcfg    querynode.Config
}

// Options change how NewWith assembles the stack.
type Options struct {
	// QueryNode is the query node's configuration (zero: the defaults).
	// Its Mmap.Dir, when empty, is {Dir}/cache/mmap.
	QueryNode querynode.Config
	// Logger is the components' logger (nil: discarded).
	Logger *slog.Logger
	// PChannels is the number of DML pchannels (0: one), the most shards
	// a collection gets.
	PChannels int
}

// New assembles the stack over a temporary directory and creates Collection.
func New(t *testing.T) *Stack {
	t.Helper()
	return NewWith(t, Options{})
}

// NewWith is New with options, which Reopen keeps.
func NewWith(t *testing.T, opts Options) *Stack {
	t.Helper()
	s := open(t, t.TempDir(), opts)
	t.Cleanup(func() { s.close() })
	s.CreateCollection(Collection)
	s.describe()
	return s
}

// CreateCollection creates a collection with Collection's schema (an Int64
// primary key "id" and a 2-dimensional "vec"), one shard on the stack's
// only pchannel, and returns it.
func (s *Stack) CreateCollection(name string) *catalog.Collection {
	s.T.Helper()
	return s.CreateSharded(name, 1)
}

// CreateSharded is CreateCollection with shards shards (at most
// Options.PChannels of them).
func (s *Stack) CreateSharded(name string, shards int32) *catalog.Collection {
	s.T.Helper()
	schema, err := proto.Marshal(&schemapb.CollectionSchema{Name: name, Fields: []*schemapb.FieldSchema{
		{Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}})
	require.NoError(s.T, err)
	st, err := s.Proxy.CreateCollection(context.Background(), &milvuspb.CreateCollectionRequest{CollectionName: name, Schema: schema, ShardsNum: shards})
	require.NoError(s.T, err)
	require.Zero(s.T, st.GetCode(), st.GetReason())
	col, err := s.Root.Collection("", name)
	require.NoError(s.T, err)
	return col
}

// InsertRows writes rows with keys [from, to) (vec = [key, 1]) into the
// default partition of collection name.
func (s *Stack) InsertRows(name string, from, to int64) {
	s.T.Helper()
	resp, err := s.Proxy.Insert(context.Background(), &milvuspb.InsertRequest{
		CollectionName: name, NumRows: uint32(to - from), FieldsData: rows(from, to),
	})
	require.NoError(s.T, err)
	require.Zero(s.T, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
}

// Reopen closes every component (no data node may be running), runs
// between over the data directory while nothing has it open (an offline
// repair, say), and assembles the stack again over the same directory, as
// a restarted server does. The query node starts with nothing loaded.
func (s *Stack) Reopen(between func(dir string)) {
	s.T.Helper()
	s.close()
	between(s.Dir)
	*s = *open(s.T, s.Dir, s.opts)
	s.describe()
}

// describe fills CollectionID and VChannels from the root coordinator.
func (s *Stack) describe() {
	s.T.Helper()
	col, err := s.Root.Collection("", Collection)
	require.NoError(s.T, err)
	s.CollectionID, s.VChannels = col.ID, col.VChannels
}

// close closes what open opened, last first (idempotent).
func (s *Stack) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		_ = s.closers[i]()
	}
	s.closers = nil
}

// open assembles the stack over dir.
func open(t *testing.T, dir string, opts Options) *Stack {
	t.Helper()
	ctx := context.Background()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	qcfg := opts.QueryNode
	if qcfg == (querynode.Config{}) {
		qcfg = querynode.Defaults()
	}
	if qcfg.RootPath == "" {
		qcfg.RootPath = querynode.Defaults().RootPath
	}
	if qcfg.Mmap.Dir == "" {
		qcfg.Mmap.Dir = filepath.Join(dir, "cache", "mmap")
	}
	var closers []func() error
	meta, err := embedded.Open(filepath.Join(dir, "meta.db"), logger)
	require.NoError(t, err)
	closers = append(closers, meta.Close)
	store, err := objlocal.Open(filepath.Join(dir, "storage"))
	require.NoError(t, err)
	log, err := local.Open(local.Config{Dir: filepath.Join(dir, "wal")}, logger)
	require.NoError(t, err)
	closers = append(closers, log.Close)
	clock, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.TimestampKey}, logger)
	require.NoError(t, err)
	ids, err := tso.New(ctx, meta, tso.Config{Key: "tso/" + tso.IDKey}, logger)
	require.NoError(t, err)
	writer := wal.NewWriter(log, clock, wal.WriterDefaults(), logger)
	rcfg := rootcoord.Defaults()
	rcfg.PChannels = max(opts.PChannels, 1)
	root, err := rootcoord.New(ctx, rcfg, meta, ids, clock, writer, logger)
	require.NoError(t, err)
	pins := wal.NewPins(log)
	data, err := datacoord.New(ctx, datacoord.Defaults(), meta, ids, writer, pins, root, store, logger)
	require.NoError(t, err)
	s := &Stack{
		T: t, Dir: dir, Log: log, Objects: store, IDs: ids, Root: root, Data: data,
		QNSegments: &HookedSegments{Coordinator: data}, QNObjects: &HookedObjects{Store: store}, opts: opts,
		writer: writer, clock: clock, pins: pins, qcfg: qcfg,
	}
	s.QueryNode = querynode.New(qcfg, log, s.QNObjects, s.QNSegments, root, writer, pins, logger)
	s.closers = append(closers, s.QueryNode.Close)
	s.DataNodeConfig = datanode.Defaults()
	s.DataNodeConfig.PChannels = nil
	for i := range rcfg.PChannels {
		s.DataNodeConfig.PChannels = append(s.DataNodeConfig.PChannels, wal.PChannelName(rcfg.ChannelPrefix, i))
	}
	s.Proxy = proxy.New(proxy.Defaults(), proxy.CatalogOf(root), proxy.DataCoordOf(data), proxy.QueryNodeOf(s.QueryNode), proxy.NewLocalDML(writer, data), ids, clock, logger)
	return s
}

// Writer is the stack's WAL writer: what the query node's Ticker and the
// proxy's inserts go through.
func (s *Stack) Writer() *wal.Writer { return s.writer }

// NewQueryNode returns another query node over the stack's WAL, object
// storage and coordinators, configured as QueryNode is, as a cluster's
// other query-node processes are. It is closed when the test ends (Close
// is idempotent: a test may close it first, a node that dies).
func (s *Stack) NewQueryNode() *querynode.Node {
	qn := querynode.New(s.qcfg, s.Log, s.Objects, s.Data, s.Root, s.writer, s.pins, slog.New(slog.DiscardHandler))
	s.closers = append(s.closers, qn.Close)
	return qn
}

// NewProxy returns another proxy over the stack's coordinators, WAL writer
// and clocks, configured as Proxy is, that reads through q instead of the
// in-process query node (a remote client of it, say).
func (s *Stack) NewProxy(q proxy.QueryNode) *proxy.Proxy {
	return proxy.New(proxy.Defaults(), proxy.CatalogOf(s.Root), proxy.DataCoordOf(s.Data), q, proxy.NewLocalDML(s.writer, s.Data), s.IDs, s.clock, slog.New(slog.DiscardHandler))
}

// NewDataNode returns a fresh data node: a restarted one starts from the
// channel checkpoints.
func (s *Stack) NewDataNode() *datanode.Node {
	s.T.Helper()
	dn, err := datanode.New(s.DataNodeConfig, s.Log, s.Objects, s.Data, s.Root, s.IDs, slog.New(slog.DiscardHandler))
	require.NoError(s.T, err)
	return dn
}

// RunDataNode runs dn and its compactor until done holds, then stops them.
func (s *Stack) RunDataNode(dn *datanode.Node, done func() bool) {
	s.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = dn.Run(ctx) })
	wg.Go(func() { _ = dn.RunCompactor(ctx, s.Data, "stack") })
	deadline := time.Now().Add(30 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			cancel()
			wg.Wait()
			s.T.Fatal("stacktest: the data node did not get there in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
}

func rows(from, to int64) []*schemapb.FieldData {
	var keys []int64
	var vecs []float32
	for k := from; k < to; k++ {
		keys = append(keys, k)
		vecs = append(vecs, float32(k), 1)
	}
	return []*schemapb.FieldData{
		{FieldName: "id", Type: schemapb.DataType_Int64, Field: &schemapb.FieldData_Scalars{Scalars: &schemapb.ScalarField{
			Data: &schemapb.ScalarField_LongData{LongData: &schemapb.LongArray{Data: keys}},
		}}},
		{FieldName: "vec", Type: schemapb.DataType_FloatVector, Field: &schemapb.FieldData_Vectors{Vectors: &schemapb.VectorField{
			Dim: 2, Data: &schemapb.VectorField_FloatVector{FloatVector: &schemapb.FloatArray{Data: vecs}},
		}}},
	}
}

// Insert writes rows with keys [from, to) into the default partition and
// returns the growing segment that took them.
func (s *Stack) Insert(from, to int64) int64 {
	s.T.Helper()
	return s.InsertInto("", from, to)
}

// InsertInto writes rows with keys [from, to) into a partition ("" = the
// default one) and returns the growing segment that took them.
func (s *Stack) InsertInto(partition string, from, to int64) int64 {
	s.T.Helper()
	resp, err := s.Proxy.Insert(context.Background(), &milvuspb.InsertRequest{
		CollectionName: Collection, PartitionName: partition,
		NumRows: uint32(to - from), FieldsData: rows(from, to),
	})
	require.NoError(s.T, err)
	require.Zero(s.T, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
	col, err := s.Root.Collection("", Collection)
	require.NoError(s.T, err)
	if partition == "" {
		partition = "_default"
	}
	var part int64
	for _, p := range col.Partitions {
		if p.Name == partition {
			part = p.ID
		}
	}
	var growing []int64
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.State == catalog.SegmentGrowing && seg.Level == catalog.LevelL1 && seg.PartitionID == part {
			growing = append(growing, seg.ID)
		}
	}
	require.Len(s.T, growing, 1, "one growing segment in partition %s", partition)
	return growing[0]
}

// CreatePartition creates a partition of Collection.
func (s *Stack) CreatePartition(name string) {
	s.T.Helper()
	st, err := s.Proxy.CreatePartition(context.Background(), &milvuspb.CreatePartitionRequest{CollectionName: Collection, PartitionName: name})
	require.NoError(s.T, err)
	require.Zero(s.T, st.GetCode(), st.GetReason())
}

// Upsert replaces the rows with keys [from, to).
func (s *Stack) Upsert(from, to int64) {
	s.T.Helper()
	resp, err := s.Proxy.Upsert(context.Background(), &milvuspb.UpsertRequest{
		CollectionName: Collection,
		NumRows:        uint32(to - from), FieldsData: rows(from, to),
	})
	require.NoError(s.T, err)
	require.Zero(s.T, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
}

// Delete deletes the keys [from, to) (an "id in [...]" expression: no
// query node is asked which keys exist).
func (s *Stack) Delete(from, to int64) {
	s.T.Helper()
	keys := make([]string, 0, to-from)
	for k := from; k < to; k++ {
		keys = append(keys, strconv.FormatInt(k, 10))
	}
	resp, err := s.Proxy.Delete(context.Background(), &milvuspb.DeleteRequest{
		CollectionName: Collection,
		Expr:           "id in [" + strings.Join(keys, ", ") + "]",
	})
	require.NoError(s.T, err)
	require.Zero(s.T, resp.GetStatus().GetCode(), resp.GetStatus().GetReason())
}

// Seal seals every growing segment (the data node flushes them when it next
// runs) and returns them with the flush timestamp.
func (s *Stack) Seal() ([]int64, uint64) {
	s.T.Helper()
	ids, ts, err := s.Data.Flush(context.Background(), s.CollectionID, s.VChannels)
	require.NoError(s.T, err)
	return ids, ts
}

// Flush seals every growing segment and runs a fresh data node until they
// are Flushed and the checkpoint has passed the seal.
func (s *Stack) Flush() []int64 {
	s.T.Helper()
	ids, ts := s.Seal()
	s.RunDataNode(s.NewDataNode(), func() bool { return s.FlushState(ids, s.VChannels, ts) })
	return ids
}

// FlushState reports whether the segments are flushed and the vchannels'
// checkpoints have passed ts (datacoord.Coordinator.FlushState, whose
// error is nil in process).
func (s *Stack) FlushState(ids []int64, vchannels []string, ts uint64) bool {
	s.T.Helper()
	flushed, err := s.Data.FlushState(context.Background(), ids, vchannels, ts)
	require.NoError(s.T, err)
	return flushed
}

// CompactionState reports a compaction trigger's plans
// (datacoord.Coordinator.CompactionState, whose error is nil in process).
func (s *Stack) CompactionState(id int64) (executing, completed, failed int, plans []catalog.CompactionPlan) {
	s.T.Helper()
	executing, completed, failed, plans, err := s.Data.CompactionState(context.Background(), id)
	require.NoError(s.T, err)
	return executing, completed, failed, plans
}

// Compact runs a manual compaction to completion (a fresh data node executes it).
func (s *Stack) Compact() {
	s.T.Helper()
	id, err := s.Data.ManualCompaction(context.Background(), s.CollectionID, 0)
	require.NoError(s.T, err)
	s.RunDataNode(s.NewDataNode(), func() bool {
		executing, completed, failed, _ := s.CompactionState(id)
		require.Zero(s.T, failed, "failed compaction plans")
		return executing == 0 && completed > 0
	})
}

// Segment returns a segment's record from the data coordinator (false
// when it has none).
func (s *Stack) Segment(id int64) (catalog.SegmentInfo, bool) {
	s.T.Helper()
	info, ok, err := s.Data.Segment(context.Background(), id)
	require.NoError(s.T, err)
	return info, ok
}

// State returns a segment's state ("unknown" when it has no record).
func (s *Stack) State(id int64) string {
	info, ok := s.Segment(id)
	if !ok {
		return "unknown"
	}
	return info.State.String()
}

// Count is count(*) on the query node with Strong consistency.
func (s *Stack) Count() int64 {
	s.T.Helper()
	res, err := s.QueryNode.Query(context.Background(), &plan.Query{
		Read:      plan.Read{CollectionID: s.CollectionID, Strong: true},
		CountOnly: true,
	})
	require.NoError(s.T, err)
	return res.Count
}

// Keys returns the primary keys the query node returns for a Strong query
// of every row, in order.
func (s *Stack) Keys() []int64 {
	s.T.Helper()
	res, err := s.QueryNode.Query(context.Background(), &plan.Query{Read: plan.Read{
		CollectionID: s.CollectionID, Strong: true,
		OutputFields: []int64{100},
	}})
	require.NoError(s.T, err)
	c := res.Fields[100]
	if c == nil {
		return nil
	}
	return c.(*column.Ints).Data
}

// Served lists the segments the query node serves: ID → growing.
func (s *Stack) Served() map[int64]bool {
	out := map[int64]bool{}
	segs, err := s.QueryNode.Segments(context.Background(), s.CollectionID)
	require.NoError(s.T, err)
	for _, seg := range segs {
		out[seg.ID] = seg.Growing
	}
	return out
}

// HookedSegments is the data coordinator as the query node sees it, with a
// hook run once, right after the next Recovery (the view a load starts from).
type HookedSegments struct {
	*datacoord.Coordinator
	mu            sync.Mutex
	afterRecovery func()
}

// AfterNextRecovery sets the hook.
func (h *HookedSegments) AfterNextRecovery(hook func()) {
	h.mu.Lock()
	h.afterRecovery = hook
	h.mu.Unlock()
}

// Recovery returns the coordinator's view, then runs the pending hook.
func (h *HookedSegments) Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error) {
	rec, err := h.Coordinator.Recovery(ctx, vchannel)
	if err != nil {
		return rec, err
	}
	h.mu.Lock()
	hook := h.afterRecovery
	h.afterRecovery = nil
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	return rec, nil
}

// HookedObjects is object storage as the query node reads it; while a gate
// is set, reads of files of segments other than the allowed ones wait for it.
type HookedObjects struct {
	*objlocal.Store
	mu      sync.Mutex
	gate    chan struct{}
	allowed []int64
	held    chan struct{} // closed when a read first waits at the gate
}

// Get waits at the gate unless the key belongs to an allowed segment.
func (h *HookedObjects) Get(ctx context.Context, key string) ([]byte, error) {
	if err := h.pass(ctx, key); err != nil {
		return nil, err
	}
	return h.Store.Get(ctx, key)
}

// Open waits at the gate as Get does.
func (h *HookedObjects) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := h.pass(ctx, key); err != nil {
		return nil, 0, err
	}
	return h.Store.Open(ctx, key)
}

// pass waits at the gate unless the key belongs to an allowed segment.
func (h *HookedObjects) pass(ctx context.Context, key string) error {
	h.mu.Lock()
	wait := h.gate
	for _, id := range h.allowed {
		if strings.Contains(key, "/"+strconv.FormatInt(id, 10)+"/") {
			wait = nil
		}
	}
	if wait != nil && h.held != nil {
		close(h.held)
		h.held = nil
	}
	h.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// HoldAllBut makes reads of every segment's files but the allowed ones wait
// until the returned function is called.
func (h *HookedObjects) HoldAllBut(allowed ...int64) (release func()) {
	release, _ = h.Hold(allowed...)
	return release
}

// Hold is HoldAllBut (release may be called more than once), and also
// returns a channel closed as soon as a read waits at the gate: a test
// knows then that the reader is blocked there.
func (h *HookedObjects) Hold(allowed ...int64) (release func(), held <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	gate := make(chan struct{})
	h.gate, h.allowed, h.held = gate, allowed, make(chan struct{})
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.gate, h.allowed, h.held = nil, nil, nil
			h.mu.Unlock()
			close(gate)
		})
	}, h.held
}

// KV returns key-value pairs (k1, v1, k2, v2, ...) as Milvus params.
func KV(pairs ...string) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, &commonpb.KeyValuePair{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// Placeholders returns a float-vector placeholder group of 2-dimensional
// queries, as a client sends a search's vectors.
func Placeholders(t *testing.T, vs ...[2]float32) []byte {
	t.Helper()
	g := &commonpb.PlaceholderValue{Tag: "$0", Type: commonpb.PlaceholderType_FloatVector}
	for _, v := range vs {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, math.Float32bits(v[0]))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(v[1]))
		g.Values = append(g.Values, b)
	}
	out, err := proto.Marshal(&commonpb.PlaceholderGroup{Placeholders: []*commonpb.PlaceholderValue{g}})
	require.NoError(t, err)
	return out
}
