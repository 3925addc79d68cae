package placement

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
)

// Meta-store keys of the placement (see the package documentation).
const (
	channelPrefix = "placement/channel/"
	replicaPrefix = "placement/replica/"
)

// maxOpsPerTxn keeps each transaction well under etcd's 128 operations.
const maxOpsPerTxn = 64

// ChannelKey is the meta-store key of a vchannel's owner.
func ChannelKey(vchannel string) string { return channelPrefix + vchannel }

// ReplicaKey is the meta-store key of a replica of a collection.
func ReplicaKey(collection, replica int64) string {
	return replicaPrefix + strconv.FormatInt(collection, 10) + "/" + strconv.FormatInt(replica, 10)
}

// Assignment is a vchannel's stored placement, the value at ChannelKey.
type Assignment struct {
	// Node is the owning data node's ID.
	Node int64 `json:"node"`
	// Epoch is the assignment epoch: 1 for the channel's first owner, one
	// more on each change of owner (a record written before epochs existed
	// has 0, so its next owner gets 1). The owner sends it with every sync
	// report, and the data coordinator refuses reports of older epochs
	// (datacoord.Coordinator.Fence), so a node that lost the channel
	// cannot write after its successor started.
	Epoch int64 `json:"epoch,omitempty"`
}

// Owners returns the owner of each channel of assignments.
func Owners(assignments map[string]Assignment) map[string]int64 {
	out := make(map[string]int64, len(assignments))
	for ch, a := range assignments {
		out[ch] = a.Node
	}
	return out
}

// Store keeps the placement in the meta store. It holds no state of its
// own; the coordinator that decides the placement is its only writer
// (through its fenced meta store, so a deposed coordinator cannot
// overwrite its successor's decisions).
type Store struct {
	kv metastore.KV
}

// NewStore returns a Store over kv.
func NewStore(kv metastore.KV) *Store { return &Store{kv: kv} }

// Assignments returns the stored assignment of every vchannel.
func (s *Store) Assignments(ctx context.Context) (map[string]Assignment, error) {
	kvs, err := s.kv.Scan(ctx, channelPrefix)
	if err != nil {
		return nil, fmt.Errorf("placement: load channels: %w", err)
	}
	out := make(map[string]Assignment, len(kvs))
	for _, kv := range kvs {
		var rec Assignment
		if err := catalog.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("placement: %s: %w", kv.Key, err)
		}
		out[strings.TrimPrefix(kv.Key, channelPrefix)] = rec
	}
	return out, nil
}

// Channels returns the stored owner of every vchannel.
func (s *Store) Channels(ctx context.Context) (map[string]int64, error) {
	a, err := s.Assignments(ctx)
	if err != nil {
		return nil, err
	}
	return Owners(a), nil
}

// SaveChannels stores plan over prev (what Assignments returned) and
// returns the assignments now stored: the owner of each moved channel,
// with its epoch one above prev's, and the deletion of each channel in
// prev that the plan neither owns nor leaves unassigned (a dropped
// channel). An unassigned channel keeps its record, the dead owner and its
// epoch, so the next plan sees it as the dead owner's. Large changes are
// several transactions of at most 64 operations; each channel's record is
// written atomically.
func (s *Store) SaveChannels(ctx context.Context, prev map[string]Assignment, plan ChannelPlan) (map[string]Assignment, error) {
	saved := make(map[string]Assignment, len(plan.Owners)+len(plan.Unassigned))
	var ops []metastore.Op
	for _, ch := range sortedKeys(plan.Owners) {
		n := plan.Owners[ch]
		old, ok := prev[ch]
		if ok && old.Node == n {
			saved[ch] = old
			continue
		}
		rec := Assignment{Node: n, Epoch: old.Epoch + 1}
		b, err := catalog.Marshal(rec)
		if err != nil {
			return nil, err
		}
		ops = append(ops, metastore.Put(ChannelKey(ch), b))
		saved[ch] = rec
	}
	for _, ch := range plan.Unassigned {
		if old, ok := prev[ch]; ok {
			saved[ch] = old
		}
	}
	for _, ch := range sortedKeys(prev) {
		if _, owned := plan.Owners[ch]; !owned && !slices.Contains(plan.Unassigned, ch) {
			ops = append(ops, metastore.Delete(ChannelKey(ch)))
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), maxOpsPerTxn)
		if err := s.kv.Txn(ctx, ops[:n]...); err != nil {
			return nil, fmt.Errorf("placement: save channels: %w", err)
		}
		ops = ops[n:]
	}
	return saved, nil
}

// Replicas returns a collection's stored replicas, ordered by ID.
func (s *Store) Replicas(ctx context.Context, collection int64) ([]Replica, error) {
	kvs, err := s.kv.Scan(ctx, replicaPrefix+strconv.FormatInt(collection, 10)+"/")
	if err != nil {
		return nil, fmt.Errorf("placement: load replicas of %d: %w", collection, err)
	}
	out := make([]Replica, 0, len(kvs))
	for _, kv := range kvs {
		var r Replica
		if err := catalog.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("placement: %s: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Replica) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// AllReplicas returns every collection's stored replicas (one scan), each
// collection's ordered by ID.
func (s *Store) AllReplicas(ctx context.Context) (map[int64][]Replica, error) {
	kvs, err := s.kv.Scan(ctx, replicaPrefix)
	if err != nil {
		return nil, fmt.Errorf("placement: load replicas: %w", err)
	}
	out := map[int64][]Replica{}
	for _, kv := range kvs {
		col, _, _ := strings.Cut(strings.TrimPrefix(kv.Key, replicaPrefix), "/")
		id, err := strconv.ParseInt(col, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("placement: %s: not a replica key", kv.Key)
		}
		var r Replica
		if err := catalog.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("placement: %s: %w", kv.Key, err)
		}
		out[id] = append(out[id], r)
	}
	for _, reps := range out {
		slices.SortFunc(reps, func(a, b Replica) int { return cmp.Compare(a.ID, b.ID) })
	}
	return out, nil
}

// SaveReplicas replaces a collection's stored replicas with replicas, in
// one transaction.
func (s *Store) SaveReplicas(ctx context.Context, collection int64, replicas []Replica) error {
	old, err := s.Replicas(ctx, collection)
	if err != nil {
		return err
	}
	keep := make(map[int64]bool, len(replicas))
	var ops []metastore.Op
	for _, r := range replicas {
		keep[r.ID] = true
		b, err := catalog.Marshal(r)
		if err != nil {
			return err
		}
		ops = append(ops, metastore.Put(ReplicaKey(collection, r.ID), b))
	}
	for _, r := range old {
		if !keep[r.ID] {
			ops = append(ops, metastore.Delete(ReplicaKey(collection, r.ID)))
		}
	}
	if err := s.kv.Txn(ctx, ops...); err != nil {
		return fmt.Errorf("placement: save replicas of %d: %w", collection, err)
	}
	return nil
}

// DropReplicas deletes a collection's replicas (it was released).
func (s *Store) DropReplicas(ctx context.Context, collection int64) error {
	if err := s.kv.Txn(ctx, metastore.DeletePrefix(replicaPrefix+strconv.FormatInt(collection, 10)+"/")); err != nil {
		return fmt.Errorf("placement: drop replicas of %d: %w", collection, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
