package coordrpc

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// EncodeRecord marshals a catalog record into its catalog JSON, as the
// internal services carry catalog records (coordrpc, proxyrpc).
func EncodeRecord[T any](what string, v T) ([]byte, error) {
	b, err := catalog.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("coordrpc: encode %s: %w", what, err)
	}
	return b, nil
}

// DecodeRecord unmarshals a catalog record from its catalog JSON.
func DecodeRecord[T any](what string, b []byte) (T, error) {
	var v T
	if err := catalog.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("coordrpc: decode %s: %w", what, err)
	}
	return v, nil
}

// EncodeRecords marshals records one by one (nil for nil).
func EncodeRecords[T any](what string, vs []T) ([][]byte, error) {
	if vs == nil {
		return nil, nil
	}
	out := make([][]byte, len(vs))
	for i, v := range vs {
		b, err := EncodeRecord(what, v)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// DecodeRecords unmarshals records one by one (nil for none).
func DecodeRecords[T any](what string, bs [][]byte) ([]T, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	out := make([]T, len(bs))
	for i, b := range bs {
		v, err := DecodeRecord[T](what, b)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// EncodeCollection marshals a collection as it travels: its stored record
// (catalog.CollectionInfo in catalog JSON) whose schema bytes are the
// serialized schema the collection holds.
func EncodeCollection(c *catalog.Collection) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("coordrpc: encode collection: nil")
	}
	info := c.CollectionInfo
	if c.Schema != nil {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.Schema)
		if err != nil {
			return nil, fmt.Errorf("coordrpc: encode schema of collection %d: %w", c.ID, err)
		}
		info.Schema = b
	}
	return EncodeRecord("collection", info)
}

// DecodeCollection unmarshals a collection EncodeCollection encoded.
func DecodeCollection(b []byte) (*catalog.Collection, error) {
	c, err := catalog.DecodeCollection(b)
	if err != nil {
		return nil, fmt.Errorf("coordrpc: %w", err)
	}
	return c, nil
}

// waitMillis is a claim's wait on the wire: whole milliseconds, rounded up
// so that a positive wait stays positive.
func waitMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// errorMessage is an outcome's error on the wire: its message when set.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	m := err.Error()
	return &m
}

// remoteError is the error an outcome's message stands for.
type remoteError struct{ msg string }

func (e *remoteError) Error() string { return e.msg }

// errorOf turns an outcome's message back into an error (nil when unset).
func errorOf(m *string) error {
	if m == nil {
		return nil
	}
	return &remoteError{msg: *m}
}

// encodeShardLeaders puts shard leaders on the wire: replicas in their
// order, each replica's leaders by vchannel name, each with its node's
// address.
func encodeShardLeaders(sl plan.ShardLeaders) *coordv1.GetShardLeadersResponse {
	out := &coordv1.GetShardLeadersResponse{
		CollectionId: sl.CollectionID, CollectionName: sl.Name, PkFieldId: sl.PKField, Version: sl.Version,
		TtlMs: sl.TTL.Milliseconds(),
	}
	for _, r := range sl.Replicas {
		rep := &coordv1.ShardReplica{ReplicaId: r.ID, NodeIds: r.Nodes, Serving: r.Serving}
		for _, ch := range slices.Sorted(maps.Keys(r.Leaders)) {
			n := r.Leaders[ch]
			rep.Leaders = append(rep.Leaders, &coordv1.ShardLeader{Vchannel: ch, NodeId: n, Address: r.Addresses[n]})
		}
		out.Replicas = append(out.Replicas, rep)
	}
	return out
}

// decodeShardLeaders reads shard leaders off the wire; a node's address is
// the one its leaders carry (they must agree).
func decodeShardLeaders(m *coordv1.GetShardLeadersResponse) (plan.ShardLeaders, error) {
	if m.GetTtlMs() < 0 {
		return plan.ShardLeaders{}, fmt.Errorf("coordrpc: shard leaders of collection %d: negative ttl_ms %d", m.GetCollectionId(), m.GetTtlMs())
	}
	sl := plan.ShardLeaders{
		CollectionID: m.GetCollectionId(), Name: m.GetCollectionName(), PKField: m.GetPkFieldId(), Version: m.GetVersion(),
		TTL: time.Duration(m.GetTtlMs()) * time.Millisecond,
	}
	for _, r := range m.GetReplicas() {
		rep := plan.Replica{
			ID: r.GetReplicaId(), Nodes: r.GetNodeIds(), Serving: r.GetServing(),
			Leaders: map[string]int64{}, Addresses: map[int64]string{},
		}
		for _, l := range r.GetLeaders() {
			if _, dup := rep.Leaders[l.GetVchannel()]; dup {
				return plan.ShardLeaders{}, fmt.Errorf("coordrpc: shard leaders of collection %d: replica %d names vchannel %q twice",
					m.GetCollectionId(), r.GetReplicaId(), l.GetVchannel())
			}
			rep.Leaders[l.GetVchannel()] = l.GetNodeId()
			if l.GetAddress() == "" {
				continue
			}
			if have, ok := rep.Addresses[l.GetNodeId()]; ok && have != l.GetAddress() {
				return plan.ShardLeaders{}, fmt.Errorf("coordrpc: shard leaders of collection %d: node %d has two addresses, %s and %s",
					m.GetCollectionId(), l.GetNodeId(), have, l.GetAddress())
			}
			rep.Addresses[l.GetNodeId()] = l.GetAddress()
		}
		sl.Replicas = append(sl.Replicas, rep)
	}
	return sl, nil
}
