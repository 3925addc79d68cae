package placement

import (
	"cmp"
	"maps"
	"slices"
)

// ShardMove is one shard leadership that Rebalance moves from a node of a
// replica to another node of the same replica.
type ShardMove struct {
	// Replica is the replica's ID.
	Replica int64
	// VChannel is the shard moved.
	VChannel string
	// From leads it now; To leads it after the move.
	From, To int64
}

// Rebalance evens out the shard leaderships of a collection's replicas
// over their nodes, and over the live query nodes no replica of the
// collection uses (free nodes), as planned on the replicas evened out first. It returns the replicas it wants and the
// moves from replicas to there, by replica ID, then vchannel. Inputs are
// not modified; the result depends on them only (no map order, no
// randomness).
//
//   - A free node joins a replica whose nodes each lead more than one
//     shard (the replica with the most leaderships on its least loaded
//     node first, the lowest ID on a tie; free nodes in ID order), which
//     is then evened out again, until no free node or no such replica is
//     left.
//   - Within each replica, while its most and least loaded nodes differ by
//     more than one leadership, a shard of the most loaded node (the one
//     with more rows on a tie, then the lowest ID) moves to the least
//     loaded one (fewer rows, then the lowest ID). The shard moved is the
//     one that leaves the two nodes' rows closest (rows gives each
//     vchannel's rows; nil or missing: 0), the lowest name on a tie.
//
// A replica with a node that is not live, a leader outside its nodes or no
// node at all is left as is: Heal and Assign repair it first. Segments are
// not moved (a shard leader serves its vchannel's segments).
func Rebalance(replicas []Replica, live []int64, rows map[string]int64) ([]Replica, []ShardMove) {
	alive := make(map[int64]bool, len(live))
	for _, n := range live {
		alive[n] = true
	}
	used := map[int64]bool{}
	out := make([]Replica, len(replicas))
	healthy := make([]bool, len(replicas))
	for i, r := range replicas {
		out[i] = Replica{
			ID: r.ID, Nodes: slices.Clone(r.Nodes), Leaders: maps.Clone(r.Leaders), Segments: maps.Clone(r.Segments),
			ResourceGroup: r.ResourceGroup,
		}
		healthy[i] = len(r.Nodes) > 0
		for _, n := range r.Nodes {
			used[n] = true
			healthy[i] = healthy[i] && alive[n]
		}
		for _, n := range r.Leaders {
			healthy[i] = healthy[i] && slices.Contains(r.Nodes, n)
		}
	}
	free := freeNodes(live, used)

	// Even out each replica, then free nodes join the replicas whose every
	// node leads more than one shard, the most loaded first.
	for i := range out {
		if healthy[i] {
			balance(&out[i], rows)
		}
	}
	for len(free) > 0 {
		best, bestLow := -1, 0
		for i, r := range out {
			if !healthy[i] {
				continue
			}
			counts := leaderships(r)
			low := counts[r.Nodes[0]]
			for _, n := range r.Nodes[1:] {
				low = min(low, counts[n])
			}
			if low <= 1 {
				continue
			}
			if best < 0 || low > bestLow || (low == bestLow && r.ID < out[best].ID) {
				best, bestLow = i, low
			}
		}
		if best < 0 {
			break
		}
		out[best].Nodes = append(out[best].Nodes, free[0])
		slices.Sort(out[best].Nodes)
		free = free[1:]
		balance(&out[best], rows)
	}

	var moves []ShardMove
	for i := range out {
		if !healthy[i] {
			continue
		}
		for _, ch := range slices.Sorted(maps.Keys(out[i].Leaders)) {
			if from, to := replicas[i].Leaders[ch], out[i].Leaders[ch]; from != to {
				moves = append(moves, ShardMove{Replica: out[i].ID, VChannel: ch, From: from, To: to})
			}
		}
	}
	slices.SortStableFunc(moves, func(a, b ShardMove) int { return cmp.Compare(a.Replica, b.Replica) })
	return out, moves
}

// leaderships counts the shards each node of a replica leads (0 for a node
// that leads none).
func leaderships(r Replica) map[int64]int {
	out := make(map[int64]int, len(r.Nodes))
	for _, n := range r.Nodes {
		out[n] = 0
	}
	for _, n := range r.Leaders {
		out[n]++
	}
	return out
}

// balance moves a replica's shard leaderships until its nodes lead within
// one of each other (see Rebalance). Each move lowers the sum of the
// squared counts, so it ends.
func balance(r *Replica, rows map[string]int64) {
	for {
		counts := leaderships(*r)
		weight := make(map[int64]int64, len(r.Nodes))
		for ch, n := range r.Leaders {
			weight[n] += rows[ch]
		}
		donor, recv := r.Nodes[0], r.Nodes[0]
		for _, n := range r.Nodes[1:] {
			if counts[n] > counts[donor] || (counts[n] == counts[donor] && weight[n] > weight[donor]) {
				donor = n
			}
			if counts[n] < counts[recv] || (counts[n] == counts[recv] && weight[n] < weight[recv]) {
				recv = n
			}
		}
		if counts[donor]-counts[recv] <= 1 {
			return
		}
		var pick string
		var gap int64
		for _, ch := range slices.Sorted(maps.Keys(r.Leaders)) {
			if r.Leaders[ch] != donor {
				continue
			}
			g := (weight[donor] - rows[ch]) - (weight[recv] + rows[ch])
			if g < 0 {
				g = -g
			}
			if pick == "" || g < gap {
				pick, gap = ch, g
			}
		}
		r.Leaders[pick] = recv
	}
}
