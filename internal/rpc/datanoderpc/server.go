package datanoderpc

import (
	"context"
	"maps"
	"slices"

	"github.com/strata-db/strata/internal/errcode"
	datanodev1 "github.com/strata-db/strata/internal/rpcpb/strata/datanode/v1"
)

// ChannelOwner is the data node's channel ownership as the server serves
// it and the client implements it (the in-process *datanode.Node;
// placement.ChannelOwner is the applier's part of it).
type ChannelOwner interface {
	// WatchChannel starts consuming vchannel under an assignment epoch.
	WatchChannel(ctx context.Context, vchannel string, epoch int64) error
	// ReleaseChannel syncs what was buffered of vchannel, waits for the
	// report and stops consuming it.
	ReleaseChannel(ctx context.Context, vchannel string) error
	// Channels lists the watched vchannels with their epochs.
	Channels() map[string]int64
}

// Server serves DataNodeService from an in-process data node. Register it
// on a server made by rpc.NewServer, whose interceptor turns the errors it
// returns into statuses carrying their Milvus codes.
type Server struct {
	datanodev1.UnimplementedDataNodeServiceServer
	node ChannelOwner
}

// NewServer returns a server over the data node.
func NewServer(node ChannelOwner) *Server { return &Server{node: node} }

// WatchChannel implements DataNodeService.WatchChannel.
func (s *Server) WatchChannel(ctx context.Context, req *datanodev1.WatchChannelRequest) (*datanodev1.WatchChannelResponse, error) {
	if req.GetVchannel() == "" || req.GetEpoch() <= 0 {
		return nil, errcode.Invalid("watch channel: vchannel %q, epoch %d: want a vchannel and a positive epoch",
			req.GetVchannel(), req.GetEpoch())
	}
	if err := s.node.WatchChannel(ctx, req.GetVchannel(), req.GetEpoch()); err != nil {
		return nil, err
	}
	return &datanodev1.WatchChannelResponse{}, nil
}

// ReleaseChannel implements DataNodeService.ReleaseChannel.
func (s *Server) ReleaseChannel(ctx context.Context, req *datanodev1.ReleaseChannelRequest) (*datanodev1.ReleaseChannelResponse, error) {
	if req.GetVchannel() == "" {
		return nil, errcode.Invalid("release channel: no vchannel")
	}
	if err := s.node.ReleaseChannel(ctx, req.GetVchannel()); err != nil {
		return nil, err
	}
	return &datanodev1.ReleaseChannelResponse{}, nil
}

// ListChannels implements DataNodeService.ListChannels.
func (s *Server) ListChannels(context.Context, *datanodev1.ListChannelsRequest) (*datanodev1.ListChannelsResponse, error) {
	chans := s.node.Channels()
	resp := &datanodev1.ListChannelsResponse{}
	for _, v := range slices.Sorted(maps.Keys(chans)) {
		resp.Channels = append(resp.Channels, &datanodev1.WatchedChannel{Vchannel: v, Epoch: chans[v]})
	}
	return resp, nil
}
