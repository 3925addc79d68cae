package proxyrpc

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"

	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// Invalidator drops a proxy's metadata cache (Catalog.Invalidate; the app
// also reloads the proxy's users, roles and grants).
type Invalidator interface {
	Invalidate()
}

// ProxyServer serves ProxyService on a proxy.
type ProxyServer struct {
	proxyv1.UnimplementedProxyServiceServer
	cache  Invalidator
	logger *slog.Logger
}

// NewProxyServer returns a server over the proxy's metadata cache.
func NewProxyServer(cache Invalidator, logger *slog.Logger) *ProxyServer {
	return &ProxyServer{cache: cache, logger: logger}
}

// InvalidateMetaCache implements ProxyService.InvalidateMetaCache.
func (s *ProxyServer) InvalidateMetaCache(ctx context.Context, req *proxyv1.InvalidateMetaCacheRequest) (*proxyv1.InvalidateMetaCacheResponse, error) {
	s.cache.Invalidate()
	s.logger.DebugContext(ctx, "metadata cache invalidated", "ddl", req.GetDdl(), "db", req.GetDb(), "collection", req.GetCollection())
	return &proxyv1.InvalidateMetaCacheResponse{}, nil
}

// NotifierConfig configures a Notifier.
type NotifierConfig struct {
	// Bound is how long the coordinator waits for one proxy to drop its
	// cache; a proxy that does not answer in time is taken for dead and
	// skipped.
	Bound time.Duration `json:"bound"`
}

// Notifier tells every live proxy to drop its metadata cache: the
// coordinator calls Invalidate after every DDL that changed collections,
// databases, aliases or load records (and every RBAC change), before the
// call returns (Milvus's
// InvalidateCollectionMetaCache). The proxies are called in parallel, each
// within Bound; one that fails or is too slow is logged and skipped (a
// proxy that lost its session drops its cache by itself).
type Notifier struct {
	cfg    NotifierConfig
	list   func(ctx context.Context) ([]string, error)
	dial   func(addr string) (grpc.ClientConnInterface, error)
	logger *slog.Logger
}

// NewNotifier returns a notifier over list (the live proxies' internal
// addresses) and dial (a connection to one).
func NewNotifier(cfg NotifierConfig, list func(ctx context.Context) ([]string, error),
	dial func(addr string) (grpc.ClientConnInterface, error), logger *slog.Logger,
) *Notifier {
	if cfg.Bound <= 0 {
		cfg.Bound = 3 * time.Second
	}
	return &Notifier{cfg: cfg, list: list, dial: dial, logger: logger}
}

// Invalidate tells every live proxy that ddl changed collection coll of
// database db and returns once each has answered or was skipped.
func (n *Notifier) Invalidate(ctx context.Context, db, coll, ddl string) {
	ctx = context.WithoutCancel(ctx) // the DDL is done: tell the proxies even if its caller left
	lctx, cancel := context.WithTimeout(ctx, n.cfg.Bound)
	addrs, err := n.list(lctx)
	cancel()
	if err != nil {
		n.logger.Warn("listing the proxies to invalidate failed", "ddl", ddl, "err", err)
		return
	}
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.invalidate(ctx, addr, &proxyv1.InvalidateMetaCacheRequest{Db: db, Collection: coll, Ddl: ddl}); err != nil {
				n.logger.Warn("a proxy could not be told to drop its cache; skipped", "proxy", addr, "ddl", ddl, "err", err)
			}
		}()
	}
	wg.Wait()
}

func (n *Notifier) invalidate(ctx context.Context, addr string, req *proxyv1.InvalidateMetaCacheRequest) error {
	conn, err := n.dial(addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Bound)
	defer cancel()
	_, err = proxyv1.NewProxyServiceClient(conn).InvalidateMetaCache(ctx, req)
	return err
}
