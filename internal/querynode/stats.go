package querynode

import (
	"context"
	"sort"
)

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

// LoadProgress is how far the load of a collection is, in percent. A load
// first attaches the sealed segments of every vchannel, then replays the
// WAL from each vchannel's seek position to the end the WAL had when the
// load started. With sealed segments, attaching them is the first 90 and
// the replay (averaged over the vchannels) the last 10; without, the
// replay is all of it. It grows while the collection loads, is below 100
// until every vchannel has caught up, 100 then, and 0 when the collection
// is neither loaded nor loading.
func (n *Node) LoadProgress(_ context.Context, collectionID int64) (int64, error) {
	return n.loadProgress(collectionID), nil
}

// loadProgress is LoadProgress's answer.
func (n *Node) loadProgress(collectionID int64) int64 {
	n.mu.RLock()
	c, ok := n.collections[collectionID]
	l, loading := n.loading[collectionID]
	n.mu.RUnlock()
	switch {
	case loading:
		return l.c.progress.percent(0)
	case !ok || len(c.delegators) == 0:
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
	replay := sum / int64(len(c.delegators))
	if replay == 100 {
		return 100
	}
	return c.progress.percent(replay)
}

// percent is a load's progress given its WAL replay's (0–99): 90 % for the
// sealed segments attached, 10 % for the replay; the replay alone when there
// are no sealed segments. Never 100: the caller says when the load is done.
func (p *segmentProgress) percent(replay int64) int64 {
	total := p.total.Load()
	if total == 0 {
		return min(replay, 99)
	}
	return min(p.done.Load()*90/total+replay/10, 99)
}

// LoadingCollections lists the names of the collections whose load is in
// progress (such as those loaded again after a restart), sorted.
func (n *Node) LoadingCollections() []string {
	n.mu.RLock()
	out := make([]string, 0, len(n.loading))
	for _, l := range n.loading {
		out = append(out, l.c.info.Name)
	}
	n.mu.RUnlock()
	sort.Strings(out)
	return out
}
