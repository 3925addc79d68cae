package datanoderpc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	datanodev1 "github.com/strata-db/strata/internal/rpcpb/strata/datanode/v1"
)

// Config configures a data-node client.
type Config struct {
	// ReleaseTimeout is the deadline of ReleaseChannel when the caller's
	// context has none: the release waits for the vchannel's last sync.
	// Default 1m.
	ReleaseTimeout time.Duration `json:"releaseTimeout"`
}

// Defaults returns the default client configuration.
func Defaults() Config { return Config{ReleaseTimeout: time.Minute} }

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.ReleaseTimeout <= 0 {
		return fmt.Errorf("datanoderpc: releaseTimeout %s must be positive", c.ReleaseTimeout)
	}
	return nil
}

// Client is a remote data node as a ChannelOwner. Its connection comes
// from rpc.Pool (or any connection with rpc.DialOptions), which gives
// every call its deadline, retries and decoded errors.
type Client struct {
	addr   string
	cfg    Config
	c      datanodev1.DataNodeServiceClient
	logger *slog.Logger
}

// NewClient returns a client of the data node at addr over conn.
func NewClient(addr string, conn grpc.ClientConnInterface, cfg Config, logger *slog.Logger) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{addr: addr, cfg: cfg, c: datanodev1.NewDataNodeServiceClient(conn), logger: logger}, nil
}

// WatchChannel makes the node consume vchannel under epoch.
func (c *Client) WatchChannel(ctx context.Context, vchannel string, epoch int64) error {
	_, err := c.c.WatchChannel(ctx, &datanodev1.WatchChannelRequest{Vchannel: vchannel, Epoch: epoch})
	return err
}

// ReleaseChannel makes the node sync, report and stop vchannel.
func (c *Client) ReleaseChannel(ctx context.Context, vchannel string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.ReleaseTimeout)
		defer cancel()
	}
	_, err := c.c.ReleaseChannel(ctx, &datanodev1.ReleaseChannelRequest{Vchannel: vchannel})
	return err
}

// Channels lists the node's watched vchannels with their epochs; a failed
// call is logged and lists none (ListChannels returns the error).
func (c *Client) Channels() map[string]int64 {
	out, err := c.ListChannels(context.Background())
	if err != nil {
		c.logger.Warn("listing a data node's channels failed", "address", c.addr, "err", err)
		return map[string]int64{}
	}
	return out
}

// ListChannels lists the node's watched vchannels with their epochs.
func (c *Client) ListChannels(ctx context.Context) (map[string]int64, error) {
	resp, err := c.c.ListChannels(ctx, &datanodev1.ListChannelsRequest{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(resp.GetChannels()))
	for _, ch := range resp.GetChannels() {
		out[ch.GetVchannel()] = ch.GetEpoch()
	}
	return out, nil
}
