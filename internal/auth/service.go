package auth

import "github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

//go:generate go run ./guardgen

// GuardedService wraps a MilvusServiceServer so that every unary call is
// authenticated and authorized by a Guard first, as the gRPC interceptor
// does for network calls. The REST layer, which calls the service in
// process, serves through it. Its methods are generated (service_gen.go).
type GuardedService struct {
	milvuspb.MilvusServiceServer
	guard *Guard
}

// Wrap returns svc guarded by g; with authorization off it returns svc.
func (g *Guard) Wrap(svc milvuspb.MilvusServiceServer) milvuspb.MilvusServiceServer {
	if !g.enabled {
		return svc
	}
	return &GuardedService{MilvusServiceServer: svc, guard: g}
}
