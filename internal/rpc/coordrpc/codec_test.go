package coordrpc_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// populate sets every field reachable from v to a value that is not its
// zero value (slices get two elements, maps one entry, pointers a value),
// so that a record that loses a field on the wire differs from the one
// sent. It fails on a kind it does not know, so a new kind of field is
// noticed.
func populate(t *testing.T, v reflect.Value, n int) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		populate(t, v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("populate: %s has an unexported field %s", v.Type(), v.Type().Field(i).Name)
			}
			populate(t, v.Field(i), n*7+i+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			populate(t, v.Index(i), n+i)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			populate(t, v.Index(i), n+i+1)
		}
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		populate(t, k, n+1)
		populate(t, e, n+2)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n%200 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.String:
		v.SetString("v" + strconv.Itoa(n))
	default:
		t.Fatalf("populate: kind %s (%s): teach populate about it", v.Kind(), v.Type())
	}
}

// populated returns a T with every field set (populate).
func populated[T any](t *testing.T, n int) T {
	t.Helper()
	var v T
	populate(t, reflect.ValueOf(&v).Elem(), n)
	return v
}

// records is a data and root coordinator over fixed records: it answers
// with them and keeps what it is sent, so a test compares both directions
// of every method.
type records struct {
	recovery    catalog.RecoveryInfo
	segment     catalog.SegmentInfo
	tasks       []catalog.IndexTask
	indexes     []catalog.IndexInfo
	plan        catalog.CompactionPlan
	collections []*catalog.Collection
	expire      uint64

	mu       sync.Mutex
	synced   []catalog.SyncReport
	finished []any
	results  []catalog.CompactionResult
	execErrs []error
	waits    []time.Duration
	claimers []string
}

func (r *records) Recovery(context.Context, string) (catalog.RecoveryInfo, error) {
	return r.recovery, nil
}

func (r *records) Segment(_ context.Context, id int64) (catalog.SegmentInfo, bool, error) {
	if id != r.segment.ID {
		return catalog.SegmentInfo{}, false, nil
	}
	return r.segment, true, nil
}

func (r *records) SegmentIndexes(context.Context, int64) ([]catalog.IndexTask, error) {
	return r.tasks, nil
}

func (r *records) Indexes(context.Context, int64) ([]catalog.IndexInfo, error) { return r.indexes, nil }

func (r *records) Synced(_ context.Context, s catalog.SyncReport) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced = append(r.synced, s)
	return nil
}

func (r *records) ClaimIndexTask(ctx context.Context, _ string, wait time.Duration) (catalog.IndexTask, catalog.IndexInfo, bool, error) {
	r.mu.Lock()
	r.waits = append(r.waits, wait)
	r.mu.Unlock()
	if wait > time.Second {
		// Nothing to hand out: wait as the coordinator does.
		select {
		case <-ctx.Done():
			return catalog.IndexTask{}, catalog.IndexInfo{}, false, ctx.Err()
		case <-time.After(wait):
			return catalog.IndexTask{}, catalog.IndexInfo{}, false, nil
		}
	}
	return r.tasks[0], r.indexes[0], true, nil
}

func (r *records) FinishIndexTask(_ context.Context, buildID, version int64, files []string, size int64, buildErr error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, []any{buildID, version, files, size, buildErr})
	return nil
}

func (r *records) ClaimCompaction(_ context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error) {
	r.mu.Lock()
	r.claimers = append(r.claimers, executor)
	r.mu.Unlock()
	if wait == 0 {
		return catalog.CompactionPlan{}, false, nil
	}
	return r.plan, true, nil
}

func (r *records) CompleteCompaction(_ context.Context, res catalog.CompactionResult, execErr error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.results = append(r.results, res)
	r.execErrs = append(r.execErrs, execErr)
	return nil
}

func (r *records) CollectionByID(id int64) (*catalog.Collection, error) {
	for _, c := range r.collections {
		if c.ID == id {
			return c, nil
		}
	}
	return nil, errcode.New(errcode.CollectionNotFound, "collection not found[collection=%d]", id)
}

func (r *records) AllCollections(context.Context) ([]*catalog.Collection, error) {
	return r.collections, nil
}

func (r *records) ExpireBefore(context.Context, int64) (uint64, error) { return r.expire, nil }

// clients are the three clients of one coordinator.
type clients struct {
	data  *coordrpc.DataCoord
	root  *coordrpc.RootCoord
	clock *coordrpc.Clock
}

// serveCoord serves the three services on an in-memory listener and
// returns clients of them, configured by cfg, and their connection; opts
// are more options of the server.
func serveCoord(t *testing.T, cfg rpc.ClientConfig, dc *coordrpc.DataCoordServer, rc *coordrpc.RootCoordServer, cs *coordrpc.ClockServer,
	opts ...grpc.ServerOption,
) (clients, *grpc.ClientConn) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	logger := slog.New(slog.DiscardHandler)
	srv, err := rpc.NewServer(rpc.ServerDefaults(), logger, opts...)
	require.NoError(t, err)
	coordv1.RegisterDataCoordServiceServer(srv, dc)
	coordv1.RegisterRootCoordServiceServer(srv, rc)
	coordv1.RegisterClockServiceServer(srv, cs)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	pool, err := rpc.NewPool(cfg, logger,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, pool.Close())
		srv.GracefulStop()
		require.NoError(t, <-served)
	})
	conn, err := pool.Conn("bufconn")
	require.NoError(t, err)
	return dial(t, pool, "bufconn"), conn
}

// serveRecords serves r as the data and root coordinator (and no clock).
func serveRecords(t *testing.T, cfg rpc.ClientConfig, r *records) (clients, *grpc.ClientConn) {
	t.Helper()
	return serveCoord(t, cfg, coordrpc.NewDataCoordServer(r, r, r, r, r), coordrpc.NewRootCoordServer(r), coordrpc.NewClockServer(nil, nil, nil))
}

// dial returns the clients of the coordinator at addr.
func dial(t *testing.T, pool *rpc.Pool, addr string) clients {
	t.Helper()
	conn, err := pool.Conn(addr)
	require.NoError(t, err)
	data, err := coordrpc.NewDataCoord(conn, coordrpc.Defaults())
	require.NoError(t, err)
	return clients{data: data, root: coordrpc.NewRootCoord(conn), clock: coordrpc.NewClock(conn)}
}

// collection is a collection with every record field set and a real
// schema.
func collection(t *testing.T, n int) *catalog.Collection {
	t.Helper()
	info := populated[catalog.CollectionInfo](t, n)
	schema := &schemapb.CollectionSchema{Name: info.Name, Fields: []*schemapb.FieldSchema{
		{FieldID: 100, Name: "id", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
		{FieldID: 101, Name: "vec", DataType: schemapb.DataType_FloatVector, TypeParams: []*commonpb.KeyValuePair{{Key: "dim", Value: "2"}}},
	}}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(schema)
	require.NoError(t, err)
	info.Schema = b
	return &catalog.Collection{CollectionInfo: info, Schema: schema}
}

// sameCollection requires got to be want: the record and the schema.
func sameCollection(t *testing.T, want, got *catalog.Collection) {
	t.Helper()
	require.Equal(t, want.CollectionInfo, got.CollectionInfo)
	require.True(t, proto.Equal(want.Schema, got.Schema), "schema: sent %v, received %v", want.Schema, got.Schema)
}

// TestRecordsSurviveTheWire sends every catalog record each method carries,
// with every field set, through client and server, both ways.
func TestRecordsSurviveTheWire(t *testing.T) {
	r := &records{
		recovery:    populated[catalog.RecoveryInfo](t, 1),
		segment:     populated[catalog.SegmentInfo](t, 2),
		tasks:       populated[[]catalog.IndexTask](t, 3),
		indexes:     populated[[]catalog.IndexInfo](t, 4),
		plan:        populated[catalog.CompactionPlan](t, 5),
		collections: []*catalog.Collection{collection(t, 6), collection(t, 7)},
		expire:      42 << 18,
	}
	r.collections[1].ID = r.collections[0].ID + 1
	c, _ := serveRecords(t, rpc.ClientDefaults(), r)
	ctx := context.Background()

	ri, err := c.data.Recovery(ctx, "v0")
	require.NoError(t, err)
	require.Equal(t, r.recovery, ri)

	seg, ok, err := c.data.Segment(ctx, r.segment.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r.segment, seg)
	seg, ok, err = c.data.Segment(ctx, r.segment.ID+1)
	require.NoError(t, err)
	require.False(t, ok, "an unknown segment is not found, and no error")
	require.Zero(t, seg)

	tasks, err := c.data.SegmentIndexes(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, r.tasks, tasks)
	idxs, err := c.data.Indexes(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, r.indexes, idxs)

	report := populated[catalog.SyncReport](t, 8)
	require.NoError(t, c.data.Synced(ctx, report))
	require.Equal(t, []catalog.SyncReport{report}, r.synced)

	task, idx, ok, err := c.data.ClaimIndexTask(ctx, "b1", 250*time.Millisecond)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r.tasks[0], task)
	require.Equal(t, r.indexes[0], idx)
	require.Equal(t, []time.Duration{250 * time.Millisecond}, r.waits, "the wait travels")

	require.NoError(t, c.data.FinishIndexTask(ctx, 7, 3, []string{"a", "b"}, 99, nil))
	require.NoError(t, c.data.FinishIndexTask(ctx, 8, 4, nil, 0, errors.New("build failed: out of memory")))
	require.Len(t, r.finished, 2)
	require.Equal(t, []any{int64(7), int64(3), []string{"a", "b"}, int64(99), nil}, r.finished[0])
	failed := r.finished[1].([]any)
	require.Equal(t, []any{int64(8), int64(4), []string(nil), int64(0)}, failed[:4])
	require.EqualError(t, failed[4].(error), "build failed: out of memory")

	p, ok, err := c.data.ClaimCompaction(ctx, "e1", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r.plan, p)
	_, ok, err = c.data.ClaimCompaction(ctx, "e2", 0)
	require.NoError(t, err)
	require.False(t, ok, "nothing to claim")
	require.Equal(t, []string{"e1", "e2"}, r.claimers, "the executor travels")

	res := populated[catalog.CompactionResult](t, 9)
	require.NoError(t, c.data.CompleteCompaction(ctx, res, nil))
	require.NoError(t, c.data.CompleteCompaction(ctx, res, errors.New("input changed")))
	require.Equal(t, []catalog.CompactionResult{res, res}, r.results)
	require.NoError(t, r.execErrs[0])
	require.EqualError(t, r.execErrs[1], "input changed")

	col, err := c.root.CollectionByID(r.collections[1].ID)
	require.NoError(t, err)
	sameCollection(t, r.collections[1], col)
	_, err = c.root.CollectionByID(-1)
	require.Equal(t, errcode.CollectionNotFound, errcode.CodeOf(err), "the code comes back")
	all, err := c.root.AllCollections(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	for i := range all {
		sameCollection(t, r.collections[i], all[i])
	}
	cut, err := c.root.ExpireBefore(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, r.expire, cut)
}

// TestClaimWaitOutlivesTheDefaultDeadline: a claim whose context has no
// deadline waits its whole wait at the coordinator, even past the
// transport's default deadline; one whose context has a deadline ends
// with it, as in process.
func TestClaimWaitOutlivesTheDefaultDeadline(t *testing.T) {
	cfg := rpc.ClientDefaults()
	cfg.Timeout = 500 * time.Millisecond // shorter than the wait below
	c, _ := serveRecords(t, cfg, &records{})

	start := time.Now()
	_, _, ok, err := c.data.ClaimIndexTask(context.Background(), "b1", 1500*time.Millisecond)
	require.NoError(t, err)
	require.False(t, ok, "nothing appeared in the wait")
	require.GreaterOrEqual(t, time.Since(start), 1500*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, _, err = c.data.ClaimIndexTask(ctx, "b1", 5*time.Second)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestConfigValidate(t *testing.T) {
	require.NoError(t, coordrpc.Defaults().Validate())
	require.Error(t, coordrpc.Config{}.Validate())
	_, err := coordrpc.NewDataCoord(nil, coordrpc.Config{ClaimSlack: -time.Second})
	require.ErrorContains(t, err, "claimSlack")
}

// TestBadRecordsAreRefused: bytes that are not a record's catalog JSON are
// refused with code 1100 (not retried), and no record is applied.
func TestBadRecordsAreRefused(t *testing.T) {
	r := &records{}
	_, conn := serveRecords(t, rpc.ClientDefaults(), r)
	raw := coordv1.NewDataCoordServiceClient(conn)
	_, err := raw.ReportSync(context.Background(), &coordv1.ReportSyncRequest{Report: []byte("{not json")})
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	_, err = raw.CompleteCompaction(context.Background(), &coordv1.CompleteCompactionRequest{Result: []byte("[1]")})
	require.Equal(t, errcode.IllegalArgument, errcode.CodeOf(err))
	require.Empty(t, r.synced)
	require.Empty(t, r.results)

	_, err = coordrpc.DecodeCollection([]byte(`{"schema":"AQ=="}`))
	require.Error(t, err, "schema bytes that are not a CollectionSchema")
	_, err = coordrpc.EncodeCollection(nil)
	require.Error(t, err)
}
