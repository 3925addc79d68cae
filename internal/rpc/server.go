package rpc

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// NewServer returns a gRPC server for internal services with the
// interceptors of this package: a call without a deadline is refused, a
// handler's error becomes a status carrying its Milvus code (StatusOf), a
// panic becomes codes.Internal, and each call is logged at debug level.
// The caller registers its services, serves and stops it.
func NewServer(cfg ServerConfig, logger *slog.Logger, opts ...grpc.ServerOption) (*grpc.Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(cfg.MaxMessageSize),
		grpc.MaxSendMsgSize(cfg.MaxMessageSize),
		// Clients ping idle connections (keepaliveTime); allow it.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveTime / 2, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(serverInterceptor(logger)),
	}
	return grpc.NewServer(append(base, opts...)...), nil
}

// serverInterceptor enforces the deadline, maps errors and recovers panics.
func serverInterceptor(logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		start := time.Now()
		defer func() {
			if logger.Enabled(ctx, slog.LevelDebug) {
				from := ""
				if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
					from = p.Addr.String()
				}
				st, _ := status.FromError(err)
				var milvus int32
				if ms := milvusStatus(st); ms != nil {
					milvus = ms.GetCode()
				}
				logger.DebugContext(ctx, "rpc served", "method", info.FullMethod, "peer", from,
					"duration", time.Since(start).String(), "code", st.Code().String(), "milvus_code", milvus)
			}
		}()
		if _, ok := ctx.Deadline(); !ok {
			return nil, status.Errorf(codes.InvalidArgument, "rpc: %s called without a deadline", info.FullMethod)
		}
		defer func() {
			if r := recover(); r != nil {
				logger.ErrorContext(ctx, "rpc handler panicked", "method", info.FullMethod, "panic", fmt.Sprint(r),
					"stack", string(debug.Stack()))
				resp, err = nil, status.Errorf(codes.Internal, "rpc: %s: panic: %v", info.FullMethod, r)
			}
		}()
		resp, err = handler(ctx, req)
		return resp, StatusOf(err)
	}
}
