package placement

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ChannelPolicy configures AssignChannels.
type ChannelPolicy struct {
	// ImbalanceThreshold moves channels between live nodes without an
	// explicit rebalance only while the most loaded node owns more than
	// this many channels above the least loaded one; it then moves just
	// enough to come back within it. Default 2 (a node that joins takes
	// over nothing until the others own 3 channels more than it).
	ImbalanceThreshold int `json:"imbalanceThreshold"`
}

// DefaultImbalanceThreshold is ChannelPolicy's default threshold.
const DefaultImbalanceThreshold = 2

// DefaultChannelPolicy returns the default policy.
func DefaultChannelPolicy() ChannelPolicy {
	return ChannelPolicy{ImbalanceThreshold: DefaultImbalanceThreshold}
}

// Validate reports a policy that cannot work.
func (p ChannelPolicy) Validate() error {
	if p.ImbalanceThreshold < 1 {
		return fmt.Errorf("placement: imbalanceThreshold %d: want at least 1", p.ImbalanceThreshold)
	}
	return nil
}

// MoveReason says why a channel moved.
type MoveReason string

// The reasons of a Move.
const (
	// ReasonNew: the channel had no owner yet (a collection was created).
	ReasonNew MoveReason = "new"
	// ReasonOwnerDead: the channel's owner is no longer a live node.
	ReasonOwnerDead MoveReason = "owner-dead"
	// ReasonBalance: the channel moved between live nodes to even the load
	// (an explicit rebalance, or the imbalance threshold was passed).
	ReasonBalance MoveReason = "balance"
	// ReasonResume: no move, the owner is told again. ChannelBalancer
	// hands every live owner its channels when it starts (a coordinator
	// that took over may not know which handoffs its predecessor
	// delivered); From and To are the same node.
	ReasonResume MoveReason = "resume"
)

// Move is one channel changing owner. From is 0 for a channel that had no
// owner; To is never 0.
type Move struct {
	// Channel is the vchannel.
	Channel string
	// From is the previous owner's node ID (0: none).
	From int64
	// To is the new owner's node ID.
	To int64
	// Reason is why it moved.
	Reason MoveReason
}

// ChannelPlan is AssignChannels' decision.
type ChannelPlan struct {
	// Owners maps every assigned vchannel to its owner's node ID.
	Owners map[string]int64
	// Moves are the changes from the previous assignment, in the order
	// they were decided; a dropped channel is not a move.
	Moves []Move
	// Unassigned lists the channels left without an owner (sorted):
	// there is no live node.
	Unassigned []string
}

// ErrNoNodes is wrapped by the problem reported when channels have no live
// node to go to.
var ErrNoNodes = errors.New("placement: no live node")

// AssignChannels decides which live data node owns each vchannel, from
// the current owners. It is a pure function: same inputs, same plan.
//
//   - A channel whose owner is live stays where it is, unless balancing
//     moves it (below). So a dead node's channels are the only ones that
//     move when a node dies.
//   - Channels without a live owner (new ones, or a dead node's) go one by
//     one, in name order, to the live node that owns the fewest channels
//     (the lowest ID on a tie).
//   - Balancing: with rebalance set, channels move from the most to the
//     least loaded node until no two nodes differ by more than one
//     channel; without it, only while they differ by more than
//     policy.ImbalanceThreshold, and only until they no longer do. The
//     channel that moves off a node is its greatest by name.
//   - Channels not in channels (dropped) are forgotten; owners that are not
//     in nodes are dead.
func AssignChannels(current map[string]int64, nodes []int64, channels []string, policy ChannelPolicy, rebalance bool) ChannelPlan {
	live := make(map[int64][]string, len(nodes))
	for _, n := range nodes {
		if n > 0 {
			live[n] = nil
		}
	}
	plan := ChannelPlan{Owners: make(map[string]int64, len(channels))}
	chans := slices.Clone(channels)
	slices.Sort(chans)
	chans = slices.Compact(chans)
	var orphans []Move
	for _, ch := range chans {
		owner, had := current[ch]
		if _, ok := live[owner]; had && ok {
			plan.Owners[ch] = owner
			live[owner] = append(live[owner], ch)
			continue
		}
		reason := ReasonNew
		if had && owner != 0 {
			reason = ReasonOwnerDead
		}
		orphans = append(orphans, Move{Channel: ch, From: owner, Reason: reason})
	}
	if len(live) == 0 {
		for _, m := range orphans {
			plan.Unassigned = append(plan.Unassigned, m.Channel)
		}
		return plan
	}
	for _, m := range orphans {
		m.To = leastLoaded(live)
		plan.Owners[m.Channel] = m.To
		live[m.To] = append(live[m.To], m.Channel)
		plan.Moves = append(plan.Moves, m)
	}
	limit := policy.ImbalanceThreshold
	if rebalance || limit < 1 {
		limit = 1
	}
	for {
		lo, hi := leastLoaded(live), mostLoaded(live)
		if len(live[hi])-len(live[lo]) <= limit {
			break
		}
		owned := live[hi]
		slices.Sort(owned)
		ch := owned[len(owned)-1]
		live[hi] = owned[:len(owned)-1]
		live[lo] = append(live[lo], ch)
		plan.Owners[ch] = lo
		plan.Moves = append(plan.Moves, Move{Channel: ch, From: hi, To: lo, Reason: ReasonBalance})
	}
	return plan
}

// leastLoaded is the node owning the fewest channels, the lowest ID on a
// tie.
func leastLoaded(load map[int64][]string) int64 {
	return pick(load, func(a, b int) bool { return a < b })
}

// mostLoaded is the node owning the most channels, the lowest ID on a tie.
func mostLoaded(load map[int64][]string) int64 {
	return pick(load, func(a, b int) bool { return a > b })
}

func pick(load map[int64][]string, better func(a, b int) bool) int64 {
	ids := slices.Sorted(maps.Keys(load))
	best := ids[0]
	for _, id := range ids[1:] {
		if better(len(load[id]), len(load[best])) {
			best = id
		}
	}
	return best
}

// Load returns how many channels each node of owners owns, every node of
// nodes included (with 0).
func Load(owners map[string]int64, nodes []int64) map[int64]int {
	out := make(map[int64]int, len(nodes))
	for _, n := range nodes {
		out[n] = 0
	}
	for _, n := range owners {
		out[n]++
	}
	return out
}
