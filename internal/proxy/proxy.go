package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/grpc/metadata"

	"github.com/strata-db/strata/internal/auth"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/quota"
	"github.com/strata-db/strata/internal/version"
	"github.com/strata-db/strata/internal/wal"
)

// WAL appends messages built under the pchannel locks, with one timestamp
// (the WAL writer; LocalDML appends through it).
type WAL interface {
	AppendBuild(ctx context.Context, pchannels []string, build func(ts uint64) (map[string][]wal.Message, error)) (uint64, error)
}

// Allocator hands out hybrid timestamps or TSO-shaped IDs.
type Allocator interface {
	Allocate(ctx context.Context, n uint32) (uint64, error)
}

// Config configures the proxy.
type Config struct {
	// MaxRequestBytes rejects DML requests larger than this (Milvus 64 MB).
	MaxRequestBytes int `json:"maxRequestBytes"`
	// BoundedStaleness is the staleness Bounded consistency accepts.
	BoundedStaleness time.Duration `json:"boundedStaleness"`
	// Version is reported by GetVersion and Connect (version.Milvus).
	Version string `json:"-"`
	// SlowQuerySpan logs a request that takes longer as slow and counts it in
	// milvus_proxy_slow_query_count (Milvus proxy.slowQuerySpanInSeconds; 0 = never).
	SlowQuerySpan time.Duration `json:"slowQuerySpan"`
}

// Defaults returns the default configuration.
func Defaults() Config {
	return Config{
		MaxRequestBytes: 64 << 20, BoundedStaleness: 5 * time.Second, Version: version.Milvus,
		SlowQuerySpan: 5 * time.Second,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("proxy: maxRequestBytes must be positive, got %d", c.MaxRequestBytes)
	case c.BoundedStaleness < 0:
		return fmt.Errorf("proxy: boundedStaleness must not be negative, got %s", c.BoundedStaleness)
	case c.SlowQuerySpan < 0:
		return fmt.Errorf("proxy: slowQuerySpan must not be negative, got %s", c.SlowQuerySpan)
	case c.Version == "":
		return errors.New("proxy: version is empty")
	}
	return nil
}

// Proxy is the Milvus API front end.
type Proxy struct {
	milvuspb.UnimplementedMilvusServiceServer

	cfg    Config
	meta   Catalog
	data   DataCoord
	query  QueryNode
	dml    DML
	ids    Allocator
	tso    Allocator
	logger *slog.Logger
	connID atomic.Int64
	rbac   *auth.Guard // users, roles and grants (auth.go); nil until SetAuth
	rbacW  RBACWriter  // where RBAC changes go (auth.go); nil: rbac's store

	quotas *quota.Quotas  // rate limits and write protection (quota.go); nil: none
	imp    Importer       // bulk import jobs (import.go); nil until SetImporter
	groups ResourceGroups // resource groups (resourcegroup.go); nil until SetResourceGroups
}

// New returns a proxy over its dependencies.
func New(cfg Config, meta Catalog, data DataCoord, query QueryNode, dml DML, ids, tso Allocator, logger *slog.Logger) *Proxy {
	p := &Proxy{cfg: cfg, meta: meta, data: data, query: query, dml: dml, ids: ids, tso: tso, logger: logger}
	p.connID.Store(time.Now().UnixMilli())
	return p
}

// dbName resolves the database: the request's, else the dbname header, else "default".
func dbName(ctx context.Context, fromReq string) string {
	if fromReq != "" {
		return fromReq
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("dbname"); len(v) > 0 && v[0] != "" {
			return v[0]
		}
	}
	return "default"
}

// collection validates a collection name's form, then looks it up: as in
// Milvus, a malformed name is refused with code 1100 and the reason
// ("Invalid collection name: 12-s. the first character of a collection name
// must be an underscore or letter: invalid parameter") before any lookup could
// answer "collection not found". The name may be an alias, whose form rules
// are the same.
func (p *Proxy) collection(ctx context.Context, db, name string) (*catalog.Collection, error) {
	if err := catalog.ValidateName("collection", name); err != nil {
		return nil, err
	}
	return p.meta.Collection(dbName(ctx, db), name)
}

// lookup looks a collection up without checking the name's form, for the
// calls Milvus answers with "collection not found" whatever the name: search,
// hybrid_search, create_index, alter_collection_properties and
// drop_collection_properties (rename's old name is looked up by the catalog).
func (p *Proxy) lookup(ctx context.Context, db, name string) (*catalog.Collection, error) {
	if name == "" {
		return nil, errcode.Invalid("collection name should not be empty")
	}
	return p.meta.Collection(dbName(ctx, db), name)
}

// validPartition checks a partition name's form, as Milvus does before it
// creates, drops, releases, checks or writes to a partition (loading or
// searching partitions only looks them up).
func validPartition(name string) error {
	return catalog.ValidateName("partition", name)
}

func ok() *commonpb.Status { return &commonpb.Status{} }

// Connect implements the handshake every SDK performs first.
func (p *Proxy) Connect(ctx context.Context, req *milvuspb.ConnectRequest) (*milvuspb.ConnectResponse, error) {
	if _, err := p.meta.Database(dbName(ctx, "")); err != nil {
		return &milvuspb.ConnectResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ConnectResponse{
		Status: ok(),
		ServerInfo: &commonpb.ServerInfo{
			BuildTags: p.cfg.Version, DeployMode: "STANDALONE",
			Reserved: map[string]string{"server": "strata"},
		},
		Identifier: p.connID.Add(1),
	}, nil
}

// GetVersion reports the Milvus API version Strata speaks.
func (p *Proxy) GetVersion(context.Context, *milvuspb.GetVersionRequest) (*milvuspb.GetVersionResponse, error) {
	return &milvuspb.GetVersionResponse{Status: ok(), Version: p.cfg.Version}, nil
}

// CheckHealth reports the server healthy.
func (p *Proxy) CheckHealth(context.Context, *milvuspb.CheckHealthRequest) (*milvuspb.CheckHealthResponse, error) {
	return &milvuspb.CheckHealthResponse{Status: ok(), IsHealthy: true}, nil
}

// AllocTimestamp returns a fresh hybrid timestamp.
func (p *Proxy) AllocTimestamp(ctx context.Context, _ *milvuspb.AllocTimestampRequest) (*milvuspb.AllocTimestampResponse, error) {
	ts, err := p.tso.Allocate(ctx, 1)
	if err != nil {
		return &milvuspb.AllocTimestampResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.AllocTimestampResponse{Status: ok(), Timestamp: ts}, nil
}

// parseBool parses a boolean parameter the way clients send it ("true", "True", "1").
func parseBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

func kvGet(kvs []*commonpb.KeyValuePair, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return "", false
}
