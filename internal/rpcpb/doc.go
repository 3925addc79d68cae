// Package rpcpb holds the Go code generated from Strata's internal RPC
// protos (proto/strata/<role>/v<N>/*.proto at the repository root), one
// package per proto package: strata/querynode/v1 is strata.querynode.v1.
// The generated files are committed; never edit them by hand.
//
// Regenerate after changing a .proto (buf, protoc-gen-go and
// protoc-gen-go-grpc at the versions buf.gen.yaml names, on PATH):
//
//	go generate ./internal/rpcpb
//
// TestGeneratedCodeIsCurrent fails when the committed code differs from
// what the protos generate (it is skipped where buf is not installed). The
// wire rules (field numbers never reused, new versions as new packages) are
// in docs/design/rpc.md.
package rpcpb

//go:generate sh -c "cd ../.. && buf lint && buf generate"
