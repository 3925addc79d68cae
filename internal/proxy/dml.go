package proxy

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/wal"
)

// DML appends a collection's deletes and inserts to the WAL at one
// timestamp (the WAL writer's, as Milvus 2.6's streaming node owns it):
// the deletes first, then the inserts, each insert assigned a growing
// segment of its vchannel while the pchannel locks are held, so that the
// segment's time range covers the timestamp. It returns the timestamp.
//
// Each request names its vchannel in ShardName (one of col.VChannels);
// rowBytes[i] is the estimated in-memory size of one row of inserts[i]
// (what the segment allocator sizes segments by). The requests are
// complete but for the inserts' SegmentID, which the append sets.
// Nothing is appended when an error is returned before the append; an
// error of the append itself may leave it unknown whether it landed.
type DML interface {
	AppendDML(ctx context.Context, col *catalog.Collection, deletes []*msgpb.DeleteRequest,
		inserts []*msgpb.InsertRequest, rowBytes []int64) (uint64, error)
}

// LocalDML is the DML role over the WAL writer and the data coordinator's
// segment allocator of this process.
type LocalDML struct {
	wal  WAL
	segs SegmentAllocator
}

// NewLocalDML returns the in-process DML role.
func NewLocalDML(w WAL, segs SegmentAllocator) *LocalDML { return &LocalDML{wal: w, segs: segs} }

var _ DML = (*LocalDML)(nil)

// AppendDML implements DML: one AppendBuild over the pchannels touched,
// segments assigned inside it.
func (d *LocalDML) AppendDML(ctx context.Context, col *catalog.Collection, deletes []*msgpb.DeleteRequest,
	inserts []*msgpb.InsertRequest, rowBytes []int64,
) (uint64, error) {
	if len(rowBytes) != len(inserts) {
		return 0, errcode.Invalid("%d insert batches but %d row sizes", len(inserts), len(rowBytes))
	}
	shardOf := func(vch string) (int, error) {
		i := slices.Index(col.VChannels, vch)
		if i < 0 || i >= len(col.PChannels) {
			return 0, errcode.Invalid("vchannel %q is not a shard of collection %d", vch, col.ID)
		}
		return i, nil
	}
	pchs := map[string]bool{}
	delShards := make([]int, len(deletes))
	for i, d := range deletes {
		s, err := shardOf(d.GetShardName())
		if err != nil {
			return 0, err
		}
		delShards[i] = s
		pchs[col.PChannels[s]] = true
	}
	insShards := make([]int, len(inserts))
	for i, in := range inserts {
		s, err := shardOf(in.GetShardName())
		if err != nil {
			return 0, err
		}
		if in.GetNumRows() == 0 {
			return 0, errcode.Invalid("insert batch %d of collection %d has no rows", i, col.ID)
		}
		insShards[i] = s
		pchs[col.PChannels[s]] = true
	}
	list := make([]string, 0, len(pchs))
	for p := range pchs {
		list = append(list, p)
	}
	sort.Strings(list)
	return d.wal.AppendBuild(ctx, list, func(uint64) (map[string][]wal.Message, error) {
		batch := map[string][]wal.Message{}
		for i, del := range deletes {
			b, err := proto.Marshal(del)
			if err != nil {
				return nil, fmt.Errorf("proxy: marshal delete: %w", err)
			}
			pch := col.PChannels[delShards[i]]
			batch[pch] = append(batch[pch], wal.Message{Type: wal.TypeDelete, VChannel: col.VChannels[delShards[i]], Payload: b})
		}
		for i, in := range inserts {
			s := insShards[i]
			seg, err := d.segs.AssignSegment(ctx, col.ID, in.GetPartitionID(), col.VChannels[s], int64(in.GetNumRows()), rowBytes[i])
			if err != nil {
				return nil, err
			}
			in.SegmentID = seg
			b, err := proto.Marshal(in)
			if err != nil {
				return nil, fmt.Errorf("proxy: marshal insert: %w", err)
			}
			pch := col.PChannels[s]
			batch[pch] = append(batch[pch], wal.Message{Type: wal.TypeInsert, VChannel: col.VChannels[s], Payload: b})
		}
		return batch, nil
	})
}
