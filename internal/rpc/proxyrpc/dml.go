package proxyrpc

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/rpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// DML appends a collection's deletes and inserts at one timestamp
// (proxy.DML; the coordinator's proxy.LocalDML).
type DML interface {
	AppendDML(ctx context.Context, col *catalog.Collection, deletes []*msgpb.DeleteRequest,
		inserts []*msgpb.InsertRequest, rowBytes []int64) (uint64, error)
}

// CollectionByID resolves a collection by ID (the root coordinator).
type CollectionByID interface {
	CollectionByID(id int64) (*catalog.Collection, error)
}

// DMLServer serves DmlService from the WAL owner's DML role.
type DMLServer struct {
	proxyv1.UnimplementedDmlServiceServer
	dml   DML
	colls CollectionByID
}

// NewDMLServer returns a server over the DML role and the collections it
// resolves the requests' collection IDs with.
func NewDMLServer(dml DML, colls CollectionByID) *DMLServer {
	return &DMLServer{dml: dml, colls: colls}
}

// AppendDml implements DmlService.AppendDml.
func (s *DMLServer) AppendDml(ctx context.Context, req *proxyv1.AppendDmlRequest) (*proxyv1.AppendDmlResponse, error) {
	col, err := s.colls.CollectionByID(req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	dels := make([]*msgpb.DeleteRequest, len(req.GetDeletes()))
	for i, b := range req.GetDeletes() {
		if dels[i], err = unmarshal("delete", b, &msgpb.DeleteRequest{}); err != nil {
			return nil, err
		}
	}
	ins := make([]*msgpb.InsertRequest, len(req.GetInserts()))
	for i, b := range req.GetInserts() {
		if ins[i], err = unmarshal("insert", b, &msgpb.InsertRequest{}); err != nil {
			return nil, err
		}
	}
	ts, err := s.dml.AppendDML(ctx, col, dels, ins, req.GetRowBytes())
	if err != nil {
		return nil, err
	}
	return &proxyv1.AppendDmlResponse{Timestamp: ts}, nil
}

// DMLClient is the DML role over DmlService (proxy.DML). Each append is
// sent once (rpc.NoRetry): an append retried after the coordinator applied
// it would store its rows twice. A failed append may or may not have
// landed, as a failed write to Milvus; it is never acknowledged.
type DMLClient struct {
	c proxyv1.DmlServiceClient
}

// NewDMLClient returns a client of DmlService over conn.
func NewDMLClient(conn grpc.ClientConnInterface) *DMLClient {
	return &DMLClient{c: proxyv1.NewDmlServiceClient(conn)}
}

// AppendDML implements proxy.DML.
func (d *DMLClient) AppendDML(ctx context.Context, col *catalog.Collection, deletes []*msgpb.DeleteRequest,
	inserts []*msgpb.InsertRequest, rowBytes []int64,
) (uint64, error) {
	req := &proxyv1.AppendDmlRequest{CollectionId: col.ID, RowBytes: rowBytes}
	for _, d := range deletes {
		b, err := marshal("delete", d)
		if err != nil {
			return 0, err
		}
		req.Deletes = append(req.Deletes, b)
	}
	for _, in := range inserts {
		b, err := marshal("insert", in)
		if err != nil {
			return 0, err
		}
		req.Inserts = append(req.Inserts, b)
	}
	resp, err := d.c.AppendDml(ctx, req, rpc.NoRetry())
	if err != nil {
		return 0, err
	}
	return resp.GetTimestamp(), nil
}
