package proxy

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/errcode"
)

// codeIndexDuplicate is Milvus's merr code when a request names no index
// and the collection has several.
const codeIndexDuplicate int32 = 702

// oneIndex describes the one index a progress request names (by index
// name, or the only index of the collection).
func (p *Proxy) oneIndex(ctx context.Context, db, coll, index string) (*milvuspb.IndexDescription, *commonpb.Status) {
	d, err := p.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{DbName: db, CollectionName: coll, IndexName: index})
	if err != nil {
		return nil, errcode.Status(err)
	}
	if d.GetStatus().GetCode() != 0 {
		return nil, d.GetStatus()
	}
	if len(d.GetIndexDescriptions()) > 1 {
		return nil, errcode.Status(errcode.New(codeIndexDuplicate, "index duplicates[indexName=%s]", index))
	}
	return d.GetIndexDescriptions()[0], nil
}

// GetIndexBuildProgress reports how many rows the index covers: indexed
// rows grow as each segment's build finishes.
func (p *Proxy) GetIndexBuildProgress(ctx context.Context, req *milvuspb.GetIndexBuildProgressRequest) (*milvuspb.GetIndexBuildProgressResponse, error) {
	d, st := p.oneIndex(ctx, req.GetDbName(), req.GetCollectionName(), req.GetIndexName())
	if st != nil {
		return &milvuspb.GetIndexBuildProgressResponse{Status: st}, nil
	}
	return &milvuspb.GetIndexBuildProgressResponse{
		Status: ok(), IndexedRows: d.GetIndexedRows(),
		TotalRows: d.GetTotalRows(),
	}, nil
}

// GetIndexState reports the index's build state (Finished once every
// flushed segment is built).
func (p *Proxy) GetIndexState(ctx context.Context, req *milvuspb.GetIndexStateRequest) (*milvuspb.GetIndexStateResponse, error) {
	d, st := p.oneIndex(ctx, req.GetDbName(), req.GetCollectionName(), req.GetIndexName())
	if st != nil {
		return &milvuspb.GetIndexStateResponse{Status: st}, nil
	}
	return &milvuspb.GetIndexStateResponse{Status: ok(), State: d.GetState(), FailReason: d.GetIndexStateFailReason()}, nil
}
