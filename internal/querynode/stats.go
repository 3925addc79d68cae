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
