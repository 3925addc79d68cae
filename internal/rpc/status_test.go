package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/rpc"
)

// TestStatusRoundTrip sends handler errors through StatusOf and ErrorOf, as
// the two interceptors do, and checks that the proxy sees the error it
// would have seen in process: the same Milvus code and message.
func TestStatusRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		grpcCode codes.Code
		milvus   int32
		is       error
	}{
		{"coded", errcode.New(errcode.CollectionNotFound, "collection not found[collection=7]"), codes.NotFound, errcode.CollectionNotFound, nil},
		{"wrapped coded", fmt.Errorf("querynode: %w", errcode.New(errcode.CollectionNotLoaded, "collection not loaded")), codes.FailedPrecondition, errcode.CollectionNotLoaded, nil},
		{"invalid filter", errcode.Invalid("cannot parse expression: a >"), codes.InvalidArgument, errcode.IllegalArgument, nil},
		{"plain", errors.New("querynode: segment 12: read binlog: EOF"), codes.Unknown, errcode.Unexpected, nil},
		{"retriable", errcode.New(errcode.ServiceNotReady, "not ready"), codes.Unavailable, errcode.ServiceNotReady, nil},
		{"deadline", fmt.Errorf("querynode: wait tsafe: %w", context.DeadlineExceeded), codes.DeadlineExceeded, 0, context.DeadlineExceeded},
		{"canceled", context.Canceled, codes.Canceled, 0, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := rpc.StatusOf(tc.err)
			s, ok := status.FromError(st)
			require.True(t, ok)
			require.Equal(t, tc.grpcCode, s.Code())
			back := rpc.ErrorOf("/m", st)
			require.Equal(t, tc.err.Error(), back.Error())
			if tc.is != nil {
				require.ErrorIs(t, back, tc.is)
				return
			}
			var ce *errcode.Error
			require.ErrorAs(t, back, &ce)
			require.Equal(t, tc.milvus, ce.Code)
			require.Equal(t, tc.err.Error(), ce.Msg)
			require.Equal(t, errcode.Status(tc.err).GetCode(), errcode.Status(back).GetCode())
			require.Equal(t, errcode.Status(tc.err).GetReason(), errcode.Status(back).GetReason())
		})
	}
	require.NoError(t, rpc.StatusOf(nil))
	require.NoError(t, rpc.ErrorOf("/m", nil))
}

// TestErrorOfWithoutDetail covers statuses that no Strata handler made:
// the transport's own failures.
func TestErrorOfWithoutDetail(t *testing.T) {
	for _, tc := range []struct {
		code   codes.Code
		milvus int32
	}{
		{codes.Unavailable, rpc.CodeServiceUnavailable},
		{codes.Unimplemented, rpc.CodeUnimplemented},
		{codes.ResourceExhausted, errcode.Unexpected},
	} {
		err := rpc.ErrorOf("/strata.querynode.v1.QueryNodeService/Search", status.Error(tc.code, "boom"))
		require.Equal(t, tc.milvus, errcode.CodeOf(err), tc.code.String())
		require.Contains(t, err.Error(), "QueryNodeService/Search")
		require.Contains(t, err.Error(), "boom")
	}
}

func TestRetriableCode(t *testing.T) {
	require.True(t, rpc.RetriableCode(errcode.ServiceNotReady))
	require.True(t, rpc.RetriableCode(rpc.CodeServiceUnavailable))
	require.False(t, rpc.RetriableCode(errcode.RateLimit))
	require.False(t, rpc.RetriableCode(errcode.CollectionNotFound))
	require.False(t, rpc.RetriableCode(errcode.Unexpected))
}
