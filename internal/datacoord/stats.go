package datacoord

import "github.com/strata-db/strata/internal/catalog"

// CompactionCounts counts the compaction plans the coordinator keeps, by
// Milvus compaction type name (Level0DeleteCompaction, MixCompaction,
// ClusteringCompaction) and Milvus task state (pipelining, executing,
// completed, failed), for the metrics scrape.
func (c *Coordinator) CompactionCounts() map[[2]string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[[2]string]int{}
	for _, p := range c.compaction.plans {
		state := p.state
		if state == "pending" {
			state = "pipelining"
		}
		out[[2]string{MilvusCompactionType(p.plan.Type), state}]++
	}
	return out
}

// MilvusCompactionType is Milvus's name of a compaction type (datapb.CompactionType).
func MilvusCompactionType(t catalog.CompactionType) string {
	switch t {
	case catalog.CompactionL0:
		return "Level0DeleteCompaction"
	case catalog.CompactionMix:
		return "MixCompaction"
	case catalog.CompactionClustering:
		return "ClusteringCompaction"
	}
	return t.String()
}
