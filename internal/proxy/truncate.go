package proxy

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/errcode"
)

// TruncateCollection removes every row of a collection (or of the collection
// an alias names) and keeps its schema, partitions, indexes, aliases and
// load state. A loaded collection is released, truncated and loaded again
// before the call returns, so reads after it see no row of before.
func (p *Proxy) TruncateCollection(ctx context.Context, req *milvuspb.TruncateCollectionRequest) (*milvuspb.TruncateCollectionResponse, error) {
	col, err := p.collection(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.TruncateCollectionResponse{Status: errcode.Status(err)}, nil
	}
	if err := p.query.WaitLoad(ctx, col.ID); err != nil { // a reload after a restart, say
		return &milvuspb.TruncateCollectionResponse{Status: errcode.Status(err)}, nil
	}
	loaded, parts, err := p.query.Loaded(ctx, col.ID)
	if err != nil {
		return &milvuspb.TruncateCollectionResponse{Status: errcode.Status(err)}, nil
	}
	replicas, err := p.query.Replicas(ctx, col.ID)
	if err != nil {
		return &milvuspb.TruncateCollectionResponse{Status: errcode.Status(err)}, nil
	}
	if loaded {
		p.query.Release(col.ID)
	}
	err = p.data.Truncate(ctx, col.ID)
	if loaded {
		// Loaded again whatever the truncate did: a failed one left the
		// data as it was, and the collection must stay readable.
		if lerr := p.query.Load(ctx, col.ID, parts, len(replicas), nil); err == nil {
			err = lerr
		}
	}
	return &milvuspb.TruncateCollectionResponse{Status: errcode.Status(err)}, nil
}
