// Package api holds what the network front end needs around the proxy:
// gRPC server options (message size limits, keepalive), interceptors that
// count requests and turn a panic in a handler into an error instead of a
// crash, and the Prometheus metrics they record.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"runtime/debug"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
)

// MaxMessageBytes is the gRPC message limit. It is larger than the 64 MB DML
// limit so that an oversized insert reaches the proxy and gets a Milvus
// Status error naming the limit instead of a transport error.
const MaxMessageBytes = 256 << 20

// Metrics are the request metrics of the API layer.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewMetrics registers the API metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "strata", Subsystem: "proxy", Name: "requests_total",
			Help: "gRPC requests by method and outcome.",
		}, []string{"method", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "strata", Subsystem: "proxy", Name: "request_seconds",
			Help:    "gRPC request latency by method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"method"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// ServerOptions returns the gRPC server options for the Milvus service.
func ServerOptions(m *Metrics, logger *slog.Logger) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(unaryInterceptor(m, logger)),
	}
}

func unaryInterceptor(m *Metrics, logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		method := path.Base(info.FullMethod)
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				logger.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, fmt.Sprintf("internal error in %s: %v", method, r))
			}
			outcome := "ok"
			if err != nil {
				outcome = "grpc_error"
			} else if c := responseCode(resp); c != 0 {
				outcome = "error"
			}
			m.requests.WithLabelValues(method, outcome).Inc()
			m.latency.WithLabelValues(method).Observe(time.Since(start).Seconds())
		}()
		return handler(ctx, req)
	}
}

// responseCode extracts the Milvus status code of a response (0 if none).
func responseCode(resp any) int32 {
	switch r := resp.(type) {
	case *commonpb.Status:
		return r.GetCode()
	case interface{ GetStatus() *commonpb.Status }:
		return r.GetStatus().GetCode()
	}
	return 0
}
