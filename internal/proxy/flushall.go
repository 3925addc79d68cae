package proxy

import (
	"context"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
)

// flushAllScope resolves what FlushAll and GetFlushAllState cover: the
// flush targets (a database, and optionally collections in it), else the
// request's database, else every database.
func (p *Proxy) flushAllScope(ctx context.Context, db string, targets []*milvuspb.FlushAllTarget) (map[string][]*catalog.Collection, error) {
	out := map[string][]*catalog.Collection{}
	add := func(db string, names []string) error {
		if _, err := p.meta.Database(db); err != nil {
			return err
		}
		if len(names) == 0 {
			cols, err := p.meta.Collections(ctx, db)
			if err != nil {
				return err
			}
			out[db] = append(out[db], cols...)
			return nil
		}
		for _, n := range names {
			col, err := p.collection(ctx, db, n)
			if err != nil {
				return err
			}
			out[db] = append(out[db], col)
		}
		return nil
	}
	switch {
	case len(targets) > 0:
		for _, t := range targets {
			if err := add(dbName(ctx, t.GetDbName()), t.GetCollectionNames()); err != nil {
				return nil, err
			}
		}
	case db != "":
		if err := add(db, nil); err != nil {
			return nil, err
		}
	default:
		dbs, err := p.meta.Databases(ctx)
		if err != nil {
			return nil, err
		}
		for _, d := range dbs {
			if err := add(d.Name, nil); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// FlushAll seals and syncs the growing segments of every collection in
// scope (flushAllScope) and returns the timestamp GetFlushAllState waits
// for.
func (p *Proxy) FlushAll(ctx context.Context, req *milvuspb.FlushAllRequest) (*milvuspb.FlushAllResponse, error) {
	scope, err := p.flushAllScope(ctx, req.GetDbName(), req.GetFlushTargets())
	if err != nil {
		return &milvuspb.FlushAllResponse{Status: errcode.Status(err)}, nil
	}
	resp := &milvuspb.FlushAllResponse{Status: ok()}
	for db, cols := range scope {
		res := &milvuspb.FlushAllResult{DbName: db}
		for _, col := range cols {
			segs, ts, err := p.data.Flush(ctx, col.ID, col.VChannels)
			if err != nil {
				return &milvuspb.FlushAllResponse{Status: errcode.Status(err)}, nil
			}
			resp.FlushAllTs = max(resp.FlushAllTs, ts)
			res.CollectionResults = append(res.CollectionResults, &milvuspb.FlushCollectionResult{
				CollectionName: col.Name, SegmentIds: &schemapb.LongArray{Data: segs},
				FlushSegmentIds: &schemapb.LongArray{Data: segs}, SealTime: int64(ts >> 18 / 1000),
			})
		}
		resp.FlushResults = append(resp.FlushResults, res)
	}
	if resp.FlushAllTs == 0 {
		// Nothing to flush: everything before now is flushed.
		ts, err := p.tso.Allocate(ctx, 1)
		if err != nil {
			return &milvuspb.FlushAllResponse{Status: errcode.Status(err)}, nil
		}
		resp.FlushAllTs = ts
	}
	return resp, nil
}

// GetFlushAllState reports whether everything in scope written before
// flush_all_ts is in object storage: no segment that started before it is
// still growing or sealed, and every vchannel's checkpoint has passed it.
func (p *Proxy) GetFlushAllState(ctx context.Context, req *milvuspb.GetFlushAllStateRequest) (*milvuspb.GetFlushAllStateResponse, error) {
	scope, err := p.flushAllScope(ctx, req.GetDbName(), req.GetFlushTargets())
	if err != nil {
		return &milvuspb.GetFlushAllStateResponse{Status: errcode.Status(err)}, nil
	}
	ts := req.GetFlushAllTs()
	for _, t := range req.GetFlushAllTss() {
		ts = max(ts, t)
	}
	resp := &milvuspb.GetFlushAllStateResponse{Status: ok(), Flushed: true}
	for db, cols := range scope {
		st := &milvuspb.FlushAllState{DbName: db, CollectionFlushStates: map[string]bool{}}
		for _, col := range cols {
			flushed, err := p.flushedBefore(ctx, col, ts)
			if err != nil {
				return &milvuspb.GetFlushAllStateResponse{Status: errcode.Status(err)}, nil
			}
			st.CollectionFlushStates[col.Name] = flushed
			resp.Flushed = resp.Flushed && flushed
		}
		resp.FlushStates = append(resp.FlushStates, st)
	}
	return resp, nil
}

// flushedBefore reports whether the collection's rows written before ts are flushed.
func (p *Proxy) flushedBefore(ctx context.Context, col *catalog.Collection, ts uint64) (bool, error) {
	var pending []int64
	for _, s := range p.data.Segments(col.ID) {
		if (s.State == catalog.SegmentGrowing || s.State == catalog.SegmentSealed) &&
			startedBefore(s, ts) {
			pending = append(pending, s.ID)
		}
	}
	if len(pending) > 0 {
		return false, nil
	}
	return p.data.FlushState(ctx, nil, col.VChannels, ts)
}

// startedBefore reports whether a segment holds rows written at or before
// ts: its first insert is (a segment without one yet, by its creation).
func startedBefore(s catalog.SegmentInfo, ts uint64) bool {
	if s.StartPosition != nil {
		return s.StartPosition.TimeTick <= ts
	}
	return s.CreatedAt <= int64(ts>>18)
}
