package datanode

import (
	"context"
	"fmt"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
)

// changeSchema applies a wal.TypeSchemaChange: the channel writes the new
// schema's fields from now on, and the rows it buffers from before the
// change get the added fields as column.Fill's rows (null or default), so
// every sync writes one binlog per field of the schema it knows.
func (c *channel) changeSchema(payload []byte) error {
	s := &schemapb.CollectionSchema{}
	if err := proto.Unmarshal(payload, s); err != nil {
		return fmt.Errorf("decode schema change: %w", err)
	}
	// Replayed after a restart, the change may be older than the schema
	// the channel started with (which the coordinator gave it): a schema
	// that lacks one of the channel's fields is such an old one, and the
	// channel keeps its newer schema.
	has := map[int64]bool{}
	for _, f := range s.GetFields() {
		has[f.GetFieldID()] = true
	}
	for _, f := range c.coll.Schema.GetFields() {
		if !has[f.GetFieldID()] {
			return nil
		}
	}
	for _, b := range c.segs {
		for _, f := range s.GetFields() {
			if _, ok := b.cols[f.GetFieldID()]; ok {
				continue
			}
			col, err := column.Fill(f, int(b.rows))
			if err != nil {
				return err
			}
			b.cols[f.GetFieldID()] = col
		}
	}
	coll := &catalog.Collection{CollectionInfo: c.coll.CollectionInfo, Schema: s}
	coll.CollectionInfo.Schema = payload
	c.coll = coll
	return nil
}

// discardDropped drops the buffers of segments the coordinator has dropped
// since they were buffered (TruncateCollection drops growing segments):
// their rows must never be written, and a buffer left to wait for a sync
// would hold the channel's checkpoint, and so a Flush, back. A coordinator
// that cannot say fails it, and nothing is discarded.
func (c *channel) discardDropped(ctx context.Context) error {
	dropped := map[int64]bool{}
	for id := range c.segs {
		info, ok, err := c.node.coord.Segment(ctx, id)
		if err != nil {
			return err
		}
		dropped[id] = ok && info.State == catalog.SegmentDropped
	}
	c.discard(func(b *segBuffer) bool { return dropped[b.id] })
	return nil
}
