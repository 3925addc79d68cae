package proxy

import (
	"context"
	"encoding/binary"
	"hash/crc32"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/spaolacci/murmur3"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
)

// Partition-key collections (Milvus's "partition key mode"): a collection
// with a partition-key field is created with num_partitions partitions
// (`_default_0` …), and each inserted row goes to the partition its key
// hashes to, as in Milvus: an Int64 key by murmur3 (32-bit, seed 0) of its
// eight little-endian bytes, masked to 31 bits; a VarChar key by the IEEE
// CRC-32 of its first 100 bytes; the partition is the hash modulo the
// number of partitions, in creation order. Partitions are then the server's
// business: clients may not create, drop, load or release them, nor name
// one on insert, upsert, search or query.
//
// A collection created with a partition-key field before key partitions
// existed has only `_default`; its rows keep going there.

// errKeyModePartitionNames is Milvus's refusal of partition names given
// with a write or a read of a partition-key collection.
var errKeyModePartitionNames = errcode.Invalid("not support manually specifying the partition names if partition key mode is used")

// keyPartitionPrefix is how long a VarChar key's prefix is hashed.
const keyPartitionPrefix = 100

// partitionKeyField returns the collection's partition-key field, or nil.
func partitionKeyField(col *catalog.Collection) *schemapb.FieldSchema {
	for _, f := range col.Schema.GetFields() {
		if f.GetIsPartitionKey() {
			return f
		}
	}
	return nil
}

// keyMode reports whether the collection routes rows by partition key: it
// has a partition-key field and its partitions are the key partitions (no
// `_default`).
func keyMode(col *catalog.Collection) bool {
	if partitionKeyField(col) == nil {
		return false
	}
	_, hasDefault := col.Partition("_default")
	return !hasDefault
}

// keyModeRefusal is the error for a partition DDL on a key-mode collection
// (what names the operation, as Milvus words it), or nil.
func keyModeRefusal(col *catalog.Collection, what string) error {
	if partitionKeyField(col) == nil {
		return nil
	}
	return errcode.Invalid("disable %s if partition key mode is used", what)
}

// hashPartitionKey hashes row i of a partition-key column as Milvus does.
func hashPartitionKey(c column.Column, i int) (uint32, error) {
	switch c := c.(type) {
	case *column.Ints:
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(c.Data[i]))
		return murmur3.Sum32(b[:]) & 0x7fffffff, nil
	case *column.Strings:
		s := c.Data[i]
		if len(s) > keyPartitionPrefix {
			s = s[:keyPartitionPrefix]
		}
		return crc32.ChecksumIEEE([]byte(s)), nil
	}
	return 0, errcode.Invalid("the partition key should be an Int64 or VarChar field, not %T", c)
}

// routeByKey groups the rows by the key partition they hash to.
func routeByKey(col *catalog.Collection, r *rows) (map[int64][]int, error) {
	f := partitionKeyField(col)
	keys, found := r.cols[f.GetFieldID()]
	if !found {
		return nil, errcode.Invalid("the partition key field %s is missing from the data", f.GetName())
	}
	parts := col.Partitions
	out := map[int64][]int{}
	for i := range r.n {
		h, err := hashPartitionKey(keys, i)
		if err != nil {
			return nil, err
		}
		id := parts[h%uint32(len(parts))].ID
		out[id] = append(out[id], i)
	}
	return out, nil
}

// take returns the rows idx of r.
func (r *rows) take(idx []int) *rows {
	out := &rows{n: len(idx), cols: make(map[int64]column.Column, len(r.cols)), pk: r.pk.Take(idx)}
	for id, c := range r.cols {
		out.cols[id] = c.Take(idx)
	}
	if r.ts != nil {
		out.ts = r.ts.Take(idx).(*column.Ints)
	}
	return out
}

// routedInserts builds the insert batches of rows r: into the named
// partition (`_default` when none), or, for a key-mode collection, into the
// partitions their keys hash to.
func (p *Proxy) routedInserts(ctx context.Context, col *catalog.Collection, partName string, r *rows) ([]shardInsert, error) {
	if !keyMode(col) {
		partID, err := p.partitionFor(col, partName)
		if err != nil {
			return nil, err
		}
		return p.buildInserts(ctx, col, partID, r)
	}
	if partName != "" {
		return nil, errKeyModePartitionNames
	}
	groups, err := routeByKey(col, r)
	if err != nil {
		return nil, err
	}
	var out []shardInsert
	for _, part := range col.Partitions {
		idx := groups[part.ID]
		if len(idx) == 0 {
			continue
		}
		in, err := p.buildInserts(ctx, col, part.ID, r.take(idx))
		if err != nil {
			return nil, err
		}
		out = append(out, in...)
	}
	return out, nil
}
