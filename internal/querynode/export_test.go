package querynode

import (
	"github.com/strata-db/strata/internal/index"
	"github.com/strata-db/strata/internal/segment"
)

// AbortDelegators makes the running delegators of a loaded collection stop
// with err, as when their WAL consumer fails: the real consumer loop
// returns err (through the cancel cause its context carries, which is also
// how a panic in the handoff loop stops it) and takes the failure path a
// WAL read error takes. Test-only; false when the collection is not loaded.
func AbortDelegators(n *Node, collectionID int64, err error) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	c, ok := n.collections[collectionID]
	if !ok {
		return false
	}
	for _, d := range c.delegators {
		d.abort(err)
	}
	return true
}

// SealedSegments returns the sealed segments a loaded collection serves.
// Test-only.
func SealedSegments(n *Node, collectionID int64) []*segment.Segment {
	n.mu.RLock()
	defer n.mu.RUnlock()
	var out []*segment.Segment
	if c, ok := n.collections[collectionID]; ok {
		for _, d := range c.delegators {
			out = append(out, d.snapshot(false)...)
		}
	}
	return out
}

// AttachedVectors returns the stored vectors of the vector index attached
// to a segment's field (nil when none is attached or it does not store
// them), and whether an index is attached. Test-only.
func AttachedVectors(seg *segment.Segment, fieldID int64) (vecs []float32, attached bool) {
	_ = seg.Read(func(v *segment.View) error {
		ai, ok := v.Index(fieldID).(*attachedIndex)
		if !ok || ai.idx == nil {
			return nil
		}
		attached = true
		if rv, ok := ai.idx.(index.RawVectors); ok {
			vecs = rv.RawVectors()
		}
		return nil
	})
	return vecs, attached
}
