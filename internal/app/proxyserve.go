package app

import (
	"context"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/datacoord"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/proxy"
	"github.com/strata-db/strata/internal/rootcoord"
	"github.com/strata-db/strata/internal/rpc/proxyrpc"
	"github.com/strata-db/strata/internal/rpc/queryrpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
	querynodev1 "github.com/strata-db/strata/internal/rpcpb/strata/querynode/v1"
	"github.com/strata-db/strata/internal/wal"
)

// The coordinator's side of the proxy processes: what it serves them
// (strata.proxy.v1 and its query coordinator as a QueryNodeService), and
// the root coordinator whose every DDL tells them to drop their caches.

// coordQuery is the query coordinator as the coordinator's
// QueryNodeService serves it to proxy processes: the proxy's query roles;
// a shard leader's LoadVChannels is for query nodes only.
type coordQuery struct{ proxy.QueryServer }

// LoadVChannels refuses: the query coordinator places vchannels itself.
func (coordQuery) LoadVChannels(context.Context, int64, []int64, []string) error {
	return errcode.Invalid("LoadVChannels is served by query nodes, not by the coordinator")
}

// proxyServices is what the coordinator serves the proxy processes: the
// root coordinator (root, whose DDL notifies them; core, the same one
// unwrapped), the data coordinator, the DML append over the WAL writer
// (the WAL owner), the import jobs, the query coordinator (query,
// metered), the RBAC store (whose writes notify them) and the resource
// groups.
type proxyServices struct {
	root   proxy.RootCoord
	core   *rootcoord.Core
	data   *datacoord.Coordinator
	writer *wal.Writer
	imp    proxyrpc.Importer
	query  proxy.QueryServer
	rbac   proxyrpc.RBACWriter
	groups proxy.ResourceGroups
}

// registerProxyServices serves ps to the proxy processes: strata.proxy.v1
// and the query coordinator as a QueryNodeService.
func registerProxyServices(srv *grpc.Server, ps proxyServices) {
	proxyv1.RegisterCatalogServiceServer(srv, proxyrpc.NewCatalogServer(ps.root))
	proxyv1.RegisterDataServiceServer(srv, proxyrpc.NewDataServer(ps.data))
	proxyv1.RegisterDmlServiceServer(srv, proxyrpc.NewDMLServer(proxy.NewLocalDML(ps.writer, ps.data), ps.core))
	proxyv1.RegisterImportServiceServer(srv, proxyrpc.NewImportServer(ps.imp))
	proxyv1.RegisterRBACServiceServer(srv, proxyrpc.NewRBACServer(ps.rbac))
	proxyv1.RegisterResourceGroupServiceServer(srv, proxyrpc.NewResourceGroupServer(ps.groups))
	q := coordQuery{ps.query}
	querynodev1.RegisterQueryNodeServiceServer(srv, queryrpc.NewServer(q, q))
}
