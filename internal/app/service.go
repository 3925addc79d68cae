package app

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/sysinfo"
)

// service is the Milvus service the server registers: the proxy, plus the
// system RPCs that describe the whole server (sysinfo), which the proxy
// alone cannot answer.
type service struct {
	*proxy.Proxy
	info *sysinfo.Reporter
}

// GetMetrics implements milvuspb.MilvusServiceServer.
func (s service) GetMetrics(_ context.Context, req *milvuspb.GetMetricsRequest) (*milvuspb.GetMetricsResponse, error) {
	return s.info.Metrics(req.GetRequest()), nil
}

// GetComponentStates implements milvuspb.MilvusServiceServer.
func (s service) GetComponentStates(context.Context, *milvuspb.GetComponentStatesRequest) (*milvuspb.ComponentStates, error) {
	return s.info.ComponentStates(), nil
}

// Connect implements milvuspb.MilvusServiceServer: the proxy's answer with
// the build information.
func (s service) Connect(ctx context.Context, req *milvuspb.ConnectRequest) (*milvuspb.ConnectResponse, error) {
	resp, err := s.Proxy.Connect(ctx, req)
	if err == nil && resp.GetServerInfo() != nil {
		resp.ServerInfo = s.info.ServerInfo()
	}
	return resp, err
}
