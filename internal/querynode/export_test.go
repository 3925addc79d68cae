package querynode

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
