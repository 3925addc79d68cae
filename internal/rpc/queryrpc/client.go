package queryrpc

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/plan"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
)

// Client is a remote query node in the proxy's query-side roles
// (proxy.Loader and proxy.Reader, i.e. proxy.QueryServer). Its connection
// comes from rpc.Pool (or any connection with rpc.DialOptions), which
// gives every call its deadline, retries and decoded errors.
type Client struct {
	addr   string
	cfg    Config
	c      querynodev1.QueryNodeServiceClient
	logger *slog.Logger
}

// Config configures a query-node client.
type Config struct {
	// LoadTimeout is the deadline of Load and WaitLoad when the caller's
	// context has none: a load lasts as long as its segments take to read,
	// far longer than the transport's default deadline (in process the
	// proxy's Load has no deadline of its own).
	LoadTimeout time.Duration `json:"loadTimeout"`
}

// Defaults returns the default client configuration: loads may take 30
// minutes.
func Defaults() Config { return Config{LoadTimeout: 30 * time.Minute} }

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.LoadTimeout <= 0 {
		return fmt.Errorf("queryrpc: loadTimeout %s must be positive", c.LoadTimeout)
	}
	return nil
}

// NewClient returns a client of the query node at addr over conn.
func NewClient(addr string, conn grpc.ClientConnInterface, cfg Config, logger *slog.Logger) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Client{addr: addr, cfg: cfg, c: querynodev1.NewQueryNodeServiceClient(conn), logger: logger}, nil
}

// loadContext gives a load call LoadTimeout when ctx has no deadline.
func (c *Client) loadContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.cfg.LoadTimeout)
}

// Load loads a collection (or more of its partitions) on the node (or on
// the replicas of the query coordinator served behind the same contract,
// in resourceGroups).
func (c *Client) Load(ctx context.Context, collectionID int64, partitions []int64, replicaNumber int, resourceGroups []string) error {
	ctx, cancel := c.loadContext(ctx)
	defer cancel()
	_, err := c.c.Load(ctx, &querynodev1.LoadRequest{
		CollectionId: collectionID, PartitionIds: partitions, ReplicaNumber: int32(min(max(replicaNumber, 0), math.MaxInt32)),
		ResourceGroups: resourceGroups,
	})
	return err
}

// LoadVChannels loads a collection on the node for some of its vchannels
// only (none: all), as a shard leader of a replica (querycoord).
func (c *Client) LoadVChannels(ctx context.Context, collectionID int64, partitions []int64, vchannels []string) error {
	ctx, cancel := c.loadContext(ctx)
	defer cancel()
	_, err := c.c.Load(ctx, &querynodev1.LoadRequest{CollectionId: collectionID, PartitionIds: partitions, Vchannels: vchannels})
	return err
}

// Replicas is where the collection's replicas run: nil from a query node
// (one replica by itself), the placed replicas from the coordinator's
// query coordinator. A failed call is the error, never "no replicas".
func (c *Client) Replicas(ctx context.Context, collectionID int64) ([]plan.Replica, error) {
	resp, err := c.c.GetReplicas(ctx, &querynodev1.GetReplicasRequest{CollectionId: collectionID})
	if err != nil {
		return nil, err
	}
	return decodeReplicas(resp.GetReplicas()), nil
}

// Release releases a collection; a failure is logged (see the package
// doc, "The status methods").
func (c *Client) Release(collectionID int64) {
	_, err := c.c.Release(context.Background(), &querynodev1.ReleaseRequest{CollectionId: collectionID})
	c.failed(err, "release", collectionID)
}

// ReleasePartitions releases partitions of a collection; a failure is
// logged.
func (c *Client) ReleasePartitions(collectionID int64, partitions []int64) {
	_, err := c.c.ReleasePartitions(context.Background(), &querynodev1.ReleasePartitionsRequest{CollectionId: collectionID, PartitionIds: partitions})
	c.failed(err, "release_partitions", collectionID)
}

// state asks for a collection's load state (the call's error, which is
// logged, when it failed).
func (c *Client) state(ctx context.Context, collectionID int64) (*querynodev1.GetLoadStateResponse, error) {
	resp, err := c.c.GetLoadState(ctx, &querynodev1.GetLoadStateRequest{CollectionId: collectionID})
	c.failed(err, "get_load_state", collectionID)
	return resp, err
}

// Loaded reports whether the collection is loaded, and which partitions.
// A failed call is the error, never "not loaded".
func (c *Client) Loaded(ctx context.Context, collectionID int64) (bool, []int64, error) {
	s, err := c.state(ctx, collectionID)
	if err != nil {
		return false, nil, err
	}
	return s.GetLoaded(), s.GetPartitionIds(), nil
}

// Loading reports whether a load of the collection is in progress.
func (c *Client) Loading(ctx context.Context, collectionID int64) (bool, error) {
	s, err := c.state(ctx, collectionID)
	if err != nil {
		return false, err
	}
	return s.GetLoading(), nil
}

// LoadProgress is the collection's load progress in percent.
func (c *Client) LoadProgress(ctx context.Context, collectionID int64) (int64, error) {
	s, err := c.state(ctx, collectionID)
	if err != nil {
		return 0, err
	}
	return s.GetProgress(), nil
}

// LoadFailure is why the collection's last load failed (with its Milvus
// code), or nil; err is the call's own error when the node could not say.
func (c *Client) LoadFailure(ctx context.Context, collectionID int64) (failure, err error) {
	s, err := c.state(ctx, collectionID)
	if err != nil {
		return nil, err
	}
	if f := s.GetFailure(); f != nil {
		return &errcode.Error{Code: f.GetCode(), Msg: f.GetReason()}, nil
	}
	return nil, nil
}

// WaitLoad waits until no load of the collection is in progress.
func (c *Client) WaitLoad(ctx context.Context, collectionID int64) error {
	ctx, cancel := c.loadContext(ctx)
	defer cancel()
	_, err := c.c.WaitLoad(ctx, &querynodev1.WaitLoadRequest{CollectionId: collectionID})
	return err
}

// Segments lists the segments the node serves for the collection (the
// call's error, which is logged, when it failed).
func (c *Client) Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error) {
	resp, err := c.c.ListSegments(ctx, &querynodev1.ListSegmentsRequest{CollectionId: collectionID})
	c.failed(err, "list_segments", collectionID)
	if err != nil {
		return nil, err
	}
	return decodeSegments(resp.GetSegments()), nil
}

// Search runs a search on the node.
func (c *Client) Search(ctx context.Context, req *plan.Search) (*plan.SearchResult, error) {
	m, err := EncodeSearch(req)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	resp, err := c.c.Search(ctx, m)
	if err != nil {
		return nil, err
	}
	return UnmarshalSearchResult(resp.GetResult())
}

// Query runs a query on the node.
func (c *Client) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	m, err := EncodeQuery(req)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	resp, err := c.c.Query(ctx, m)
	if err != nil {
		return nil, err
	}
	return DecodeQueryResult(resp)
}

// BM25Stats returns the node's statistics of a full-text search.
func (c *Client) BM25Stats(ctx context.Context, req *plan.Search) (*plan.BM25Stats, error) {
	m, err := EncodeSearch(req)
	if err != nil {
		return nil, errcode.Invalid("%v", err)
	}
	resp, err := c.c.GetBM25Stats(ctx, &querynodev1.GetBM25StatsRequest{Search: m})
	if err != nil {
		return nil, err
	}
	if resp.GetStats() == nil {
		return nil, fmt.Errorf("queryrpc: query node %s answered no BM25 statistics", c.addr)
	}
	return DecodeBM25Stats(resp.GetStats())
}

// failed logs a status method's error, which it cannot return.
func (c *Client) failed(err error, call string, collectionID int64) {
	if err != nil {
		c.logger.Warn("query node call failed", "addr", c.addr, "call", call, "collection_id", collectionID, "err", err)
	}
}
