package datacoord

import (
	"context"

	"github.com/strata-db/strata/internal/catalog"
)

// Truncate drops every segment of a collection (Milvus 2.6
// TruncateCollection); the collection, its partitions, indexes and channel
// checkpoints stay. The drop is one meta-store transaction, so it survives a
// restart whole. Rows inserted afterwards go to new segments (assignment
// never hands out a dropped one); nodes that replay the WAL refuse inserts
// of the dropped segments, and a data node's later sync of one is ignored.
func (c *Coordinator) Truncate(ctx context.Context, collectionID int64) error {
	return c.drop(ctx, func(s *catalog.SegmentInfo) bool { return s.CollectionID == collectionID }, nil)
}
