package querynode

// ServiceTimes returns, for each vchannel the node serves, the timestamp
// through which it is readable (its tsafe), for the metrics scrape.
func (n *Node) ServiceTimes() map[string]uint64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	out := map[string]uint64{}
	for _, c := range n.collections {
		for _, d := range c.delegators {
			d.tsMu.Lock()
			out[d.vchannel] = d.tsafe
			d.tsMu.Unlock()
		}
	}
	return out
}

// LoadProgress is how far the load of a collection is, in percent: each
// vchannel's replay of the WAL from its seek position to the end the WAL
// had when the load started, averaged over the vchannels; 100 once every
// vchannel has caught up, 0 when the collection is not loaded.
func (n *Node) LoadProgress(collectionID int64) int64 {
	n.mu.RLock()
	c, ok := n.collections[collectionID]
	n.mu.RUnlock()
	if !ok || len(c.delegators) == 0 {
		return 0
	}
	var sum int64
	for _, d := range c.delegators {
		d.tsMu.Lock()
		next := d.next
		d.tsMu.Unlock()
		switch {
		case next >= d.end || d.end <= d.seek:
			sum += 100
		default:
			sum += min(max((next-d.seek)*100/(d.end-d.seek), 0), 99)
		}
	}
	return sum / int64(len(c.delegators))
}
