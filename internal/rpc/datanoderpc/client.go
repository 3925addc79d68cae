package datanoderpc

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	datanodev1 "github.com/strata-db/strata/internal/rpcpb/strata/datanode/v1"
)

// Client is a remote data node as a ChannelOwner. Its connection comes
// from rpc.Pool (or any connection with rpc.DialOptions), which gives
// every call its deadline, retries and decoded errors.
type Client struct {
	addr   string
	c      datanodev1.DataNodeServiceClient
	logger *slog.Logger
}

// NewClient returns a client of the data node at addr over conn; logger
// may be nil.
func NewClient(addr string, conn grpc.ClientConnInterface, logger *slog.Logger) *Client {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{addr: addr, c: datanodev1.NewDataNodeServiceClient(conn), logger: logger}
}

// WatchChannel makes the node consume vchannel under epoch.
func (c *Client) WatchChannel(ctx context.Context, vchannel string, epoch int64) error {
	_, err := c.c.WatchChannel(ctx, &datanodev1.WatchChannelRequest{Vchannel: vchannel, Epoch: epoch})
	return err
}

// ReleaseChannel makes the node sync, report and stop vchannel. Give ctx
// a deadline long enough for the vchannel's last sync
// (placement.ApplierConfig.ReleaseTimeout); without one the transport's
// default applies.
func (c *Client) ReleaseChannel(ctx context.Context, vchannel string) error {
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
