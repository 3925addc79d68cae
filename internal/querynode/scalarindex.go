package querynode

import (
	"fmt"

	"github.com/strata-db/strata/internal/index/scalar"
	"github.com/strata-db/strata/internal/segment"
)

// attachScalarIndex decodes a scalar index file and attaches it to a sealed
// segment, where the filter evaluator finds it (segment.View.Index) and
// answers comparisons, in-lists and prefix matches on the field from it.
func attachScalarIndex(seg *segment.Segment, fieldID int64, file string, data []byte) error {
	x, err := scalar.Unmarshal(data)
	if err != nil {
		return fmt.Errorf("decode index %s: %w", file, err)
	}
	return attachDecoded(seg, fieldID, file, x)
}

// attachRTreeIndex decodes an RTREE index file and attaches it to a sealed
// segment, where spatial filters on the field use it to skip rows whose
// bounding box cannot match.
func attachRTreeIndex(seg *segment.Segment, fieldID int64, file string, data []byte) error {
	x, err := scalar.UnmarshalRTree(data)
	if err != nil {
		return fmt.Errorf("decode index %s: %w", file, err)
	}
	return attachDecoded(seg, fieldID, file, x)
}

// attachDecoded attaches index x, decoded from file, to a sealed segment
// once it is sure to cover the segment's rows.
func attachDecoded(seg *segment.Segment, fieldID int64, file string, x interface{ Len() int }) error {
	if x.Len() != seg.Len() {
		return fmt.Errorf("index %s has %d rows, segment %d has %d", file, x.Len(), seg.ID, seg.Len())
	}
	seg.SetIndex(fieldID, x)
	return nil
}
