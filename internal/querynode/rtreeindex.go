package querynode

import (
	"fmt"

	"github.com/strata-db/strata/internal/index/scalar"
	"github.com/strata-db/strata/internal/segment"
)

// attachRTreeIndex decodes an RTREE index file and attaches it to a sealed
// segment, where spatial filters on the field use it to skip rows whose
// bounding box cannot match.
func attachRTreeIndex(seg *segment.Segment, fieldID int64, file string, data []byte) error {
	x, err := scalar.UnmarshalRTree(data)
	if err != nil {
		return fmt.Errorf("decode index %s: %w", file, err)
	}
	if x.Len() != seg.Len() {
		return fmt.Errorf("index %s has %d rows, segment %d has %d", file, x.Len(), seg.ID, seg.Len())
	}
	seg.SetIndex(fieldID, x)
	return nil
}
