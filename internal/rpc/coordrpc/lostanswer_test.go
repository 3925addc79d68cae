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
)

// answerLoser is a server interceptor that lets the first ReportSync
// carrying rows be applied and then loses its answer: the caller gets
// Unavailable, as when the connection breaks after the coordinator
// committed the report.
type answerLoser struct {
	mu   sync.Mutex
	lost []catalog.SyncReport
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
	rows := int64(0)
	for _, ss := range r.Segments {
		rows += ss.Rows
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if rows == 0 || len(a.lost) > 0 {
		return resp, nil
	}
	a.lost = append(a.lost, r)
	return nil, status.Error(codes.Unavailable, "test: the answer was lost")
}

func (a *answerLoser) reports() []catalog.SyncReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]catalog.SyncReport(nil), a.lost...)
}

// TestReportSyncAnswerLost: a data node whose first sync report is applied
// but whose answer is lost syncs again (new files) and reports again; the
// coordinator recognises the report it applied, and every row is stored
// and served exactly once.
func TestReportSyncAnswerLost(t *testing.T) {
	s := stacktest.New(t)
	loser := &answerLoser{}
	c, _ := serveCoord(t, rpc.ClientDefaults(),
		coordrpc.NewDataCoordServer(s.Data, s.Data, s.Data, s.Data, s.Data),
		coordrpc.NewRootCoordServer(s.Root),
		coordrpc.NewClockServer(s.IDs, s.Writer()),
		grpc.ChainUnaryInterceptor(loser.intercept))
	ctx := context.Background()

	// Every insert is synced on its own (before the flush): the lost
	// answer is a plain sync's, whose rows a second application would add.
	s.DataNodeConfig.SegmentBufferSize = 1
	s.Insert(0, 60)
	s.Insert(60, 100)
	ids, ts := s.Seal()
	runDataNode(t, s, c, func() bool { return s.Data.FlushState(ids, s.VChannels, ts) })
	lost := loser.reports()
	require.Len(t, lost, 1, "one answer was lost")
	for _, ss := range lost[0].Segments {
		require.False(t, ss.Flushed, "the lost answer is a plain sync's")
	}

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
		rows += seg.NumRows
	}
	require.EqualValues(t, 100, rows)
	require.EqualValues(t, 100, s.Data.RowCount(s.CollectionID, nil))

	require.NoError(t, s.QueryNode.Load(ctx, s.CollectionID, nil, 1))
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
