package placement

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// DefaultResourceGroup is the name Milvus gives the one resource group
// every query node belongs to unless configured otherwise; its errors name
// it.
const DefaultResourceGroup = "__default_resource_group"

// ErrNodeNotEnough is wrapped by SpawnReplicas' error when there are fewer
// live query nodes than replicas. Its text is Milvus's
// (merr.ErrResourceGroupNodeNotEnough), so clients that match on it work.
var ErrNodeNotEnough = errors.New("resource group node not enough")

// Segment is a sealed segment to place on a query node.
type Segment struct {
	// ID is the segment's ID.
	ID int64
	// VChannel is the segment's vchannel.
	VChannel string
	// Rows is its row count, the weight spreading balances.
	Rows int64
}

// Replica is one copy of a loaded collection on a set of query nodes that
// no other replica of the collection uses.
type Replica struct {
	// ID numbers the replica within its collection, from 1.
	ID int64 `json:"id"`
	// Nodes are the replica's query nodes, sorted.
	Nodes []int64 `json:"nodes"`
	// Leaders maps each vchannel to the replica's shard leader for it: the
	// node that tails the vchannel (its delegator) and fans the replica's
	// searches of that shard out.
	Leaders map[string]int64 `json:"leaders"`
	// Segments maps each sealed segment to the node that serves it.
	Segments map[int64]int64 `json:"segments"`
	// ResourceGroup is the resource group the replica is loaded in ("":
	// the default group, as records written before groups existed say).
	ResourceGroup string `json:"resource_group,omitempty"`
}

// Group returns the replica's resource group (DefaultResourceGroup for "").
func (r Replica) Group() string {
	if r.ResourceGroup == "" {
		return DefaultResourceGroup
	}
	return r.ResourceGroup
}

// SpawnReplicas splits the live query nodes into replicaNumber replicas
// with distinct nodes: nodes ordered by load (rows they already serve, the
// lowest ID on a tie) are dealt to the replicas in turn, so each replica
// gets at least one node and their loads stay close. It fails like
// Milvus's LoadCollection when there are fewer nodes than replicas.
func SpawnReplicas(replicaNumber int, nodes []int64, load map[int64]int64) ([]Replica, error) {
	if replicaNumber < 1 {
		return nil, fmt.Errorf("placement: replica number %d: want at least 1", replicaNumber)
	}
	ns := slices.Clone(nodes)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	if len(ns) < replicaNumber {
		return nil, fmt.Errorf("failed to spawn replica for collection: %w[rg=%s][currentNodeNum=%d][expectedNodeNum=%d]",
			ErrNodeNotEnough, DefaultResourceGroup, len(ns), replicaNumber)
	}
	slices.SortStableFunc(ns, func(a, b int64) int { return cmp.Compare(load[a], load[b]) })
	out := make([]Replica, replicaNumber)
	for i := range out {
		out[i] = Replica{ID: int64(i + 1), Leaders: map[string]int64{}, Segments: map[int64]int64{}}
	}
	for i, n := range ns {
		r := &out[i%replicaNumber]
		r.Nodes = append(r.Nodes, n)
	}
	for i := range out {
		slices.Sort(out[i].Nodes)
	}
	return out, nil
}

// Heal drops the dead nodes from the replicas (live lists the live query
// nodes) and gives each replica left without a node the least loaded live
// node that no replica of the collection uses. A replica that finds none
// stays empty until one joins; its shards are unavailable. It changes
// nothing else: Assign then moves the dead nodes' work.
func Heal(replicas []Replica, live []int64, load map[int64]int64) []Replica {
	alive := make(map[int64]bool, len(live))
	for _, n := range live {
		alive[n] = true
	}
	used := map[int64]bool{}
	out := make([]Replica, len(replicas))
	for i, r := range replicas {
		r.Nodes = slices.DeleteFunc(slices.Clone(r.Nodes), func(n int64) bool { return !alive[n] })
		for _, n := range r.Nodes {
			used[n] = true
		}
		out[i] = r
	}
	free := freeNodes(live, used)
	slices.SortStableFunc(free, func(a, b int64) int { return cmp.Compare(load[a], load[b]) })
	for i := range out {
		if len(out[i].Nodes) == 0 && len(free) > 0 {
			out[i].Nodes = []int64{free[0]}
			free = free[1:]
		}
	}
	return out
}

// Assign places a replica's shard leaders and sealed segments on its
// nodes. Work already on one of the replica's nodes stays there; only
// vchannels and segments without a node (new, or on a node the replica no
// longer has) are placed:
//
//   - each vchannel's leader is the replica node leading the fewest
//     vchannels (the lowest ID on a tie), vchannels in name order;
//   - segments, the largest first (by rows, then ID), each go to the node
//     with the fewest rows: those it serves for other collections (load)
//     plus those of the replica's segments already on it.
//
// Vchannels and segments not listed are dropped from the replica. A
// replica without nodes gets no placements.
func Assign(r Replica, vchannels []string, segments []Segment, load map[int64]int64) Replica {
	in := make(map[int64]bool, len(r.Nodes))
	for _, n := range r.Nodes {
		in[n] = true
	}
	out := Replica{ID: r.ID, Nodes: slices.Clone(r.Nodes), Leaders: map[string]int64{}, Segments: map[int64]int64{}, ResourceGroup: r.ResourceGroup}
	if len(out.Nodes) == 0 {
		return out
	}
	leading := make(map[int64]int, len(out.Nodes))
	rows := make(map[int64]int64, len(out.Nodes))
	for _, n := range out.Nodes {
		leading[n], rows[n] = 0, load[n]
	}
	chans := slices.Clone(vchannels)
	slices.Sort(chans)
	chans = slices.Compact(chans)
	var orphanChans []string
	for _, ch := range chans {
		if n, ok := r.Leaders[ch]; ok && in[n] {
			out.Leaders[ch] = n
			leading[n]++
			continue
		}
		orphanChans = append(orphanChans, ch)
	}
	for _, ch := range orphanChans {
		n := argmin(leading)
		out.Leaders[ch] = n
		leading[n]++
	}
	var orphans []Segment
	for _, s := range segments {
		if n, ok := r.Segments[s.ID]; ok && in[n] {
			out.Segments[s.ID] = n
			rows[n] += s.Rows
			continue
		}
		orphans = append(orphans, s)
	}
	slices.SortFunc(orphans, func(a, b Segment) int {
		if c := cmp.Compare(b.Rows, a.Rows); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, s := range orphans {
		n := argmin(rows)
		out.Segments[s.ID] = n
		rows[n] += s.Rows
	}
	return out
}

// freeNodes returns the live nodes not in used, sorted, without repeats.
func freeNodes(live []int64, used map[int64]bool) []int64 {
	free := make([]int64, 0, len(live))
	for _, n := range live {
		if !used[n] {
			free = append(free, n)
		}
	}
	slices.Sort(free)
	return slices.Compact(free)
}

// argmin returns the key with the smallest value, the lowest key on a tie.
func argmin[V cmp.Ordered](m map[int64]V) int64 {
	keys := slices.Sorted(maps.Keys(m))
	best := keys[0]
	for _, k := range keys[1:] {
		if m[k] < m[best] {
			best = k
		}
	}
	return best
}

// NodeRows returns the rows each node serves in the replicas, by the
// segments' row counts.
func NodeRows(replicas []Replica, segments []Segment) map[int64]int64 {
	size := make(map[int64]int64, len(segments))
	for _, s := range segments {
		size[s.ID] = s.Rows
	}
	out := map[int64]int64{}
	for _, r := range replicas {
		for id, n := range r.Segments {
			out[n] += size[id]
		}
	}
	return out
}
