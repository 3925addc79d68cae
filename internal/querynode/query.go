package querynode

import (
	"context"
	"fmt"
	"sort"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/fanout"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/segment"
)

func fieldByID(c *collection, id int64) *schemapb.FieldSchema {
	for _, f := range c.info.Schema.GetFields() {
		if f.GetFieldID() == id {
			return f
		}
	}
	return nil
}

// Query returns the rows matching the filter (or their count). Rows come
// back ordered by primary key; a key present in several segments (a
// re-insert) is returned once, from its latest insert. Segments that the
// node's delegators gave worker nodes are read there (the read fanned out
// and merged, fanout.Query).
func (n *Node) Query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	v, err := n.view(ctx, &req.Read)
	if err != nil {
		return nil, err
	}
	defer v.close()
	if len(v.remote) == 0 {
		return v.query(ctx, req)
	}
	pk := v.c.info.PKField()
	if pk == nil {
		return nil, fmt.Errorf("querynode: collection %s has no primary key", v.c.info.Name)
	}
	return fanout.Query(ctx, req, pk.GetFieldID(), v.parts())
}

// query runs a query over the view's own segments.
func (v *readView) query(ctx context.Context, req *plan.Query) (*plan.QueryResult, error) {
	c, ts, expire := v.c, v.ts, v.expire
	e, err := compile(c, &req.Read)
	if err != nil {
		return nil, err
	}
	segs := v.selected(&req.Read, e)
	if req.CountOnly {
		// count(*) counts visible matching rows segment by segment, as Milvus
		// does (a key inserted twice without upsert counts twice).
		var n int64
		for _, s := range segs {
			err := s.Read(func(v *segment.View) error {
				_, count, err := searchMask(v, &req.Read, ts, expire, e, 0)
				n += int64(count)
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		return &plan.QueryResult{Count: n}, nil
	}
	var items []candidate
	for si, s := range segs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		err := s.Read(func(v *segment.View) error {
			mask, _, err := searchMask(v, &req.Read, ts, expire, e, 0)
			if err != nil {
				return err
			}
			pkCol := v.Column(s.PKField())
			for row := range v.Len() {
				if mask == nil || mask[row] {
					items = append(items, candidate{seg: si, row: row, ts: v.Timestamp(row), pk: column.KeyAt(pkCol, row)})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	items = dedupByPK(items)
	sort.Slice(items, func(i, j int) bool { return lessPK(items[i].pk, items[j].pk) })
	if req.Offset > 0 {
		if req.Offset >= len(items) {
			items = nil
		} else {
			items = items[req.Offset:]
		}
	}
	if req.Limit > 0 && len(items) > req.Limit {
		items = items[:req.Limit]
	}
	res := &plan.QueryResult{Rows: len(items), Count: int64(len(items))}
	res.Fields, err = gather(segs, items, req.OutputFields, c)
	if err != nil {
		return nil, err
	}
	if len(req.OutputFields) == 0 {
		res.Fields = map[int64]column.Column{}
	}
	return res, nil
}
