package querynode

import (
	"context"
	"unsafe"

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

// SealedSegments returns the sealed segments a loaded collection serves,
// valid while it stays loaded (they are not held). Test-only.
func SealedSegments(n *Node, collectionID int64) []*segment.Segment {
	out, release := HoldSealed(n, collectionID)
	release()
	return out
}

// HoldSealed returns the sealed segments a loaded collection serves, held
// as a read holds them (not freed, nor unmapped) until release is called.
// Test-only.
func HoldSealed(n *Node, collectionID int64) (segs []*segment.Segment, release func()) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if c, ok := n.collections[collectionID]; ok {
		for _, d := range c.delegators {
			held, _ := d.snapshot(false) // a stopped delegator holds none
			segs = append(segs, held...)
		}
	}
	return segs, func() { releaseSegments(segs) }
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

// AttachedIndexData returns where the file of the vector index attached
// to a segment's field lies in memory when it is mapped (nil when it is on
// the heap), and whether an index is attached. Test-only.
func AttachedIndexData(seg *segment.Segment, fieldID int64) (addr unsafe.Pointer, attached bool) {
	_ = seg.Read(func(v *segment.View) error {
		ai, ok := v.Index(fieldID).(*attachedIndex)
		if !ok || ai.idx == nil {
			return nil
		}
		attached = true
		if ai.mapping != nil {
			addr = unsafe.Pointer(unsafe.SliceData(ai.mapping.Data()))
		}
		if rv, ok := ai.idx.(index.RawVectors); ok && rv.RawVectors() != nil && ai.mapping != nil {
			addr = unsafe.Pointer(unsafe.SliceData(rv.RawVectors())) // the index's own array, in the mapping
		}
		return nil
	})
	return addr, attached
}

// CollectCache runs one round of the mmap cache collector. Test-only.
func CollectCache(ctx context.Context, n *Node) error { return n.collectCache(ctx) }

// AttachedIndex returns the vector index attached to a sealed segment's
// field, or nil. Test-only.
func AttachedIndex(seg *segment.Segment, fieldID int64) index.Index {
	var out index.Index
	_ = seg.Read(func(v *segment.View) error {
		if ai, ok := v.Index(fieldID).(*attachedIndex); ok {
			out = ai.idx
		}
		return nil
	})
	return out
}

// WaitTSafe waits until every delegator of a loaded collection has
// consumed its vchannel up to timestamp ts (a read at ts would not wait).
// Test-only; false when the collection is not loaded.
func WaitTSafe(ctx context.Context, n *Node, collectionID int64, ts uint64) (bool, error) {
	n.mu.RLock()
	c, ok := n.collections[collectionID]
	n.mu.RUnlock()
	if !ok {
		return false, nil
	}
	for _, d := range c.delegators {
		if _, err := d.waitTSafe(ctx, ts); err != nil {
			return true, err
		}
	}
	return true, nil
}
