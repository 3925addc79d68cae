package querynode

import (
	"fmt"

	"github.com/strata-db/strata/internal/segment"
)

// attachDecoded attaches index x, decoded from file, to a sealed segment
// once it is sure to cover the segment's rows.
func attachDecoded(seg *segment.Segment, fieldID int64, file string, x interface{ Len() int }) error {
	if x.Len() != seg.Len() {
		return fmt.Errorf("index %s has %d rows, segment %d has %d", file, x.Len(), seg.ID, seg.Len())
	}
	seg.SetIndex(fieldID, x)
	return nil
}
