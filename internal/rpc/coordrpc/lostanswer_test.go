package coordrpc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/rpc"
	"github.com/strata-db/strata/internal/rpc/coordrpc"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
	"github.com/strata-db/strata/internal/stacktest"
	"github.com/strata-db/strata/internal/storage"
)

// answerLoser is a server interceptor that lets the first ReportSync
// carrying rows, and the first flushing a segment, be applied and then
// loses their answers: the caller gets Unavailable, as when the connection
// breaks after the coordinator committed the report.
type answerLoser struct {
	mu                  sync.Mutex
	lost                []catalog.SyncReport
	lostRows, lostFlush bool
	// retried counts the reports of a lost one's sync sent again.
	retried int
}

func (a *answerLoser) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil || info.FullMethod != coordv1.DataCoordService_ReportSync_FullMethodName {
		return resp, err
	}
	var r catalog.SyncReport
	if err := catalog.Unmarshal(req.(*coordv1.ReportSyncRequest).GetReport(), &r); err != nil {
		return nil, err
	}
	rows, flush := int64(0), false
	for _, ss := range r.Segments {
		rows += ss.Rows
		flush = flush || ss.Flushed
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, l := range a.lost {
		// A retry reports the same checkpoint (a flush's retry no
		// segment: the node finds the flush recorded).
		if r.Checkpoint == l.Checkpoint {
			a.retried++
		}
	}
	switch {
	case flush && !a.lostFlush:
		a.lostFlush = true
	case rows > 0 && !flush && !a.lostRows:
		a.lostRows = true
	default:
		return resp, nil
	}
	a.lost = append(a.lost, r)
	return nil, status.Error(codes.Unavailable, "test: the answer was lost")
}

// retries is how many reports repeated a lost one's sync.
func (a *answerLoser) retries() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.retried
}

func (a *answerLoser) reports() []catalog.SyncReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]catalog.SyncReport(nil), a.lost...)
}

// TestReportSyncAnswerLost: a data node whose sync report is applied but
// whose answer is lost syncs again (new files) and reports again; the
// coordinator recognises the report it applied, and every row is stored
// and served exactly once. A flush whose answer is lost is not written
// again: its compound stats log stays the one recorded.
func TestReportSyncAnswerLost(t *testing.T) {
	s := stacktest.New(t)
	loser := &answerLoser{}
	c, _ := serveCoord(t, rpc.ClientDefaults(),
		coordrpc.NewDataCoordServer(s.Data, s.Data, s.Data, s.Data, s.Data),
		coordrpc.NewRootCoordServer(s.Root),
		coordrpc.NewClockServer(s.IDs, s.IDs, s.Writer()),
		grpc.ChainUnaryInterceptor(loser.intercept))
	ctx := context.Background()

	// The first rows are synced as they come (a plain sync, whose rows a
	// second application would add); the next ones by the flush, which
	// writes them and the compound stats log.
	// Each phase ends once the node sent the lost report's sync again.
	s.DataNodeConfig.SegmentBufferSize = 1
	s.Insert(0, 60)
	runDataNode(t, s, c, func() bool {
		segs := s.Data.Segments(s.CollectionID)
		return len(segs) == 1 && segs[0].NumRows >= 60 && loser.retries() >= 1
	})
	s.DataNodeConfig.SegmentBufferSize = 16 << 20
	s.Insert(60, 100)
	ids, ts := s.Seal()
	runDataNode(t, s, c, func() bool { return s.FlushState(ids, s.VChannels, ts) && loser.retries() >= 2 })
	require.Len(t, loser.reports(), 2, "a sync's answer and a flush's were lost")
	require.EqualValues(t, 40, loser.reports()[1].Segments[0].Rows, "the flush wrote rows")

	var rows int64
	for _, seg := range s.Data.Segments(s.CollectionID) {
		if seg.Level == catalog.LevelL0 {
			continue
		}
		require.Equal(t, catalog.SegmentFlushed, seg.State)
		for f, logs := range seg.Binlogs {
			var entries int64
			for _, l := range logs {
				entries += l.Entries
			}
			require.Equal(t, seg.NumRows, entries, "segment %d field %d lists each row once", seg.ID, f)
		}
		// The flush's retry did not replace the compound stats log the
		// record names.
		key := storage.CompoundStatsLogKey(s.DataNodeConfig.RootPath, s.CollectionID, seg.PartitionID, seg.ID, pkField)
		data, err := s.Objects.Get(ctx, key)
		require.NoError(t, err)
		var recorded int64
		for _, l := range seg.Statslogs[pkField] {
			if l.LogID == storage.CompoundStatsLogID {
				recorded = l.Size
			}
		}
		require.EqualValues(t, len(data), recorded, "segment %d's compound stats log", seg.ID)
		rows += seg.NumRows
	}
	require.EqualValues(t, 100, rows)
	rows, err := s.Data.RowCount(context.Background(), s.CollectionID, nil)
	require.NoError(t, err)
	require.EqualValues(t, 100, rows)

	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 1, nil))
	require.NoError(t, s.QueryNode.WaitLoad(ctx, s.CollectionID))
	require.EqualValues(t, 100, s.Count())
	keys := s.Keys()
	require.Len(t, keys, 100)
	seen := map[int64]bool{}
	for _, k := range keys {
		require.False(t, seen[k], "key %d served twice", k)
		seen[k] = true
	}
}
