// Package api holds what the network front end needs around the proxy:
// gRPC server options (message size limits, keepalive), interceptors that
// count requests and turn a panic in a handler into an error instead of a
// crash, the request log (one line per DDL, per failed and per slow
// request), and the Prometheus metrics they record: Strata's own
// strata_proxy_* series and Milvus's milvus_proxy_* / milvus_rootcoord_*
// request series (package metrics). REST v2 requests get the same through
// RESTHandler.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"runtime/debug"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/metrics"
)

// MaxMessageBytes is the gRPC message limit. It is larger than the 64 MB DML
// limit so that an oversized insert reaches the proxy and gets a Milvus
// Status error naming the limit instead of a transport error.
const MaxMessageBytes = 256 << 20

// Metrics are the request metrics of the API layer.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// Proxy and RootCoord are the Milvus-named request series.
	Proxy     *metrics.Proxy
	RootCoord *metrics.RootCoord
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
		Proxy:     metrics.NewProxy(reg),
		RootCoord: metrics.NewRootCoord(reg),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// Observer records finished requests: metrics and the request log.
type Observer struct {
	m      *Metrics
	logger *slog.Logger
	slow   time.Duration
}

// NewObserver returns an observer that records on m and logs to logger;
// requests that take longer than slow (0 = never) are logged as slow.
func NewObserver(m *Metrics, logger *slog.Logger, slow time.Duration) *Observer {
	return &Observer{m: m, logger: logger, slow: slow}
}

// ServerOptions returns the gRPC server options for the Milvus service.
func ServerOptions(o *Observer) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
		grpc.ChainUnaryInterceptor(o.unaryInterceptor()),
	}
}

func (o *Observer) unaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		method := path.Base(info.FullMethod)
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				o.logger.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
				resp, err = nil, status.Error(codes.Internal, fmt.Sprintf("internal error in %s: %v", method, r))
			}
			c := call{
				method: method, db: requestDB(ctx, req), collection: requestCollection(req),
				latency: time.Since(start), nq: requestNQ(req), rows: responseRows(method, resp),
			}
			outcome := "ok"
			if err != nil {
				outcome = "grpc_error"
				st, _ := status.FromError(err)
				c.failed, c.code, c.reason = true, int32(st.Code()), st.Message()
			} else if s := responseStatus(resp); s.GetCode() != 0 {
				outcome = "error"
				c.failed, c.code, c.reason = true, s.GetCode(), s.GetReason()
			}
			o.m.requests.WithLabelValues(method, outcome).Inc()
			o.m.latency.WithLabelValues(method).Observe(c.latency.Seconds())
			o.finish(c)
		}()
		return handler(ctx, req)
	}
}

// call is one finished request, from gRPC or REST.
type call struct {
	method, db, collection string
	failed                 bool
	code                   int32
	reason                 string
	latency                time.Duration
	nq, rows               int64
}

// finish records a finished request on the metrics and in the log: a WARN
// line for a failure, an INFO line for a successful DDL, a WARN line for a
// slow request, and a DEBUG line for any other.
func (o *Observer) finish(c call) {
	slow := o.slow > 0 && c.latency >= o.slow
	o.m.Proxy.Observe(metrics.Request{
		Method: c.method, DB: c.db, Collection: c.collection, Failed: c.failed,
		Latency: c.latency, NQ: c.nq, Rows: c.rows, Slow: slow,
	})
	if rootCoordDDL[c.method] {
		o.m.RootCoord.ObserveDDL(c.method, c.failed, c.latency)
	}
	attrs := []any{"method", c.method, "db", c.db, "collection", c.collection, "latency", c.latency.String()}
	switch {
	case c.failed:
		o.logger.Warn("request failed", append(attrs, "code", c.code, "reason", c.reason)...)
	case slow:
		o.logger.Warn("slow request", append(attrs, "threshold", o.slow.String())...)
	case IsDDL(c.method):
		o.logger.Info("ddl", attrs...)
	default:
		o.logger.Debug("request", attrs...)
	}
}

// rootCoordDDL are the methods Milvus counts in milvus_rootcoord_ddl_req_count.
var rootCoordDDL = setOf("CreateCollection", "DropCollection", "HasCollection", "DescribeCollection",
	"ShowCollections", "AlterCollection", "AlterCollectionField", "AddCollectionField", "RenameCollection",
	"TruncateCollection", "CreatePartition", "DropPartition", "HasPartition", "ShowPartitions",
	"CreateAlias", "DropAlias", "AlterAlias", "DescribeAlias", "ListAliases", "CreateDatabase",
	"DropDatabase", "ListDatabases", "AlterDatabase", "DescribeDatabase")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// ddlPrefixes start the names of the methods that change the schema, the
// indexes, aliases, databases, users or what is loaded: one INFO line each.
var ddlPrefixes = []string{
	"Create", "Drop", "Alter", "Rename", "Truncate", "AddCollection", "Load", "Release",
	"Flush", "ManualCompaction", "Update", "Operate", "Grant", "Revoke", "DeleteCredential", "Backup", "Restore",
}

// IsDDL reports whether method changes the catalog rather than reading or
// writing rows (it is logged once at INFO when it succeeds).
func IsDDL(method string) bool {
	for _, p := range ddlPrefixes {
		if len(method) >= len(p) && method[:len(p)] == p {
			return true
		}
	}
	return false
}

// requestDB is the database a request names: its db_name, else the dbname
// header, else "default".
func requestDB(ctx context.Context, req any) string {
	if r, ok := req.(interface{ GetDbName() string }); ok && r.GetDbName() != "" {
		return r.GetDbName()
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("dbname"); len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return "default"
}

// requestCollection is the collection a request names ("" if none).
func requestCollection(req any) string {
	if r, ok := req.(interface{ GetCollectionName() string }); ok {
		return r.GetCollectionName()
	}
	return ""
}

// requestNQ is the number of query vectors of a search (Milvus counts a
// hybrid search by its first sub-search).
func requestNQ(req any) int64 {
	switch r := req.(type) {
	case *milvuspb.SearchRequest:
		return r.GetNq()
	case *milvuspb.HybridSearchRequest:
		if len(r.GetRequests()) > 0 {
			return r.GetRequests()[0].GetNq()
		}
	}
	return 0
}

// responseRows is the number of rows a write changed.
func responseRows(method string, resp any) int64 {
	r, ok := resp.(*milvuspb.MutationResult)
	if !ok {
		return 0
	}
	switch method {
	case "Insert":
		return r.GetInsertCnt()
	case "Upsert":
		return r.GetUpsertCnt()
	case "Delete":
		return r.GetDeleteCnt()
	}
	return 0
}

// responseStatus extracts the Milvus status of a response (nil if none).
func responseStatus(resp any) *commonpb.Status {
	switch r := resp.(type) {
	case *commonpb.Status:
		return r
	case interface{ GetStatus() *commonpb.Status }:
		return r.GetStatus()
	}
	return nil
}
