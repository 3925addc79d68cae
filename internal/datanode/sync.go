package datanode

import (
	"context"
	"fmt"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// segmentFiles are the files written for one batch of a segment's rows.
type segmentFiles struct {
	binlogs   map[int64][]catalog.Binlog
	statslogs map[int64][]catalog.Binlog
	stats     *storage.PKStats
}

// writeSegment writes one insert binlog per field (system fields included)
// and one PK stats log for rows of a segment, as Milvus storage v1 does.
func (n *Node) writeSegment(ctx context.Context, coll *catalog.Collection, part, seg int64,
	cols map[int64]column.Column, rows int64, tsFrom, tsTo uint64,
) (*segmentFiles, error) {
	root := n.cfg.RootPath
	pk := coll.PKField()
	first, err := n.ids.Allocate(ctx, uint32(len(coll.Schema.GetFields())+1))
	if err != nil {
		return nil, err
	}
	out := &segmentFiles{binlogs: map[int64][]catalog.Binlog{}, statslogs: map[int64][]catalog.Binlog{}}
	logID := int64(first)
	for _, f := range coll.Schema.GetFields() {
		col := cols[f.GetFieldID()]
		d := storage.Descriptor{CollectionID: coll.ID, PartitionID: part, SegmentID: seg,
			FieldID: f.GetFieldID(), StartTimestamp: tsFrom, EndTimestamp: tsTo}
		data, err := storage.EncodeInsertLog(d, f, col)
		if err != nil {
			return nil, fmt.Errorf("encode segment %d field %d: %w", seg, f.GetFieldID(), err)
		}
		key := storage.InsertLogKey(root, coll.ID, part, seg, f.GetFieldID(), logID)
		if err := n.objects.Put(ctx, key, data); err != nil {
			return nil, err
		}
		out.binlogs[f.GetFieldID()] = []catalog.Binlog{{LogID: logID, Entries: rows, TsFrom: tsFrom,
			TsTo: tsTo, Size: int64(len(data)), MemSize: int64(col.MemorySize())}}
		logID++
	}
	st, err := pkStats(pk, cols[pk.GetFieldID()])
	if err != nil {
		return nil, err
	}
	data, err := storage.MarshalStats(st)
	if err != nil {
		return nil, err
	}
	key := storage.StatsLogKey(root, coll.ID, part, seg, pk.GetFieldID(), logID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return nil, err
	}
	out.statslogs[pk.GetFieldID()] = []catalog.Binlog{{LogID: logID, Entries: rows, TsFrom: tsFrom, TsTo: tsTo, Size: int64(len(data))}}
	out.stats = st
	return out, nil
}

// sync writes the buffers of segments ids (flush: and marks them Flushed)
// and, with deletes, the delete buffer as a new L0 segment; then it reports
// everything and the new checkpoint to the coordinator in one call.
func (c *channel) sync(ctx context.Context, ids []int64, flush, deletes bool) error {
	n := c.node
	coll := c.coll
	report := catalog.SyncReport{VChannel: c.vchannel}
	var freed int64
	for _, id := range ids {
		b := c.segs[id]
		ss := catalog.SegmentSync{SegmentID: id, CollectionID: coll.ID, Flushed: flush,
			Binlogs: map[int64][]catalog.Binlog{}, Statslogs: map[int64][]catalog.Binlog{}, SyncedOffset: c.lastOffset}
		var stats []*storage.PKStats
		if b != nil && b.rows > 0 {
			ss.PartitionID = b.partition
			ss.Rows = b.rows
			start := b.start
			ss.StartPosition = &start
			files, err := n.writeSegment(ctx, coll, b.partition, id, b.cols, b.rows, b.tsFrom, b.tsTo)
			if err != nil {
				return err
			}
			ss.Binlogs, ss.Statslogs = files.binlogs, files.statslogs
			st := files.stats
			stats = append(stats, st)
		}
		if flush {
			info, known := n.coord.Segment(id)
			if b == nil && known {
				ss.PartitionID = info.PartitionID
			}
			if err := c.writeCompoundStats(ctx, id, ss.PartitionID, info, known, stats, &ss); err != nil {
				return err
			}
		}
		if b != nil {
			freed += b.bytes
		}
		report.Segments = append(report.Segments, ss)
	}
	var l0 *catalog.SegmentInfo
	if deletes && c.dels != nil {
		var err error
		if l0, err = c.writeDeltas(ctx); err != nil {
			return err
		}
		report.L0 = l0
	}
	// The checkpoint: the first message still only in memory, else just past the last one.
	cp := catalog.ChannelCheckpoint{VChannel: c.vchannel, Position: catalog.Position{Offset: c.lastOffset + 1, TimeTick: c.lastTS},
		DeltaSyncedOffset: c.cp.DeltaSyncedOffset}
	if l0 != nil {
		cp.DeltaSyncedOffset = c.lastOffset
	}
	synced := map[int64]bool{}
	for _, id := range ids {
		synced[id] = true
	}
	lower := func(p catalog.Position) {
		if p.Offset < cp.Position.Offset {
			cp.Position = catalog.Position{Offset: p.Offset, TimeTick: p.TimeTick - 1}
		}
	}
	for id, b := range c.segs {
		if !synced[id] {
			lower(b.start)
		}
	}
	if c.dels != nil && l0 == nil {
		lower(c.dels.start)
	}
	if cp.Position.Offset < c.cp.Position.Offset {
		cp.Position = c.cp.Position // never move backwards
	}
	report.Checkpoint = cp
	if err := n.coord.Synced(ctx, report); err != nil {
		return err
	}
	for _, id := range ids {
		delete(c.segs, id)
		c.synced[id] = c.lastOffset
		if flush {
			c.flushed[id] = true
		}
	}
	if l0 != nil {
		c.dels = nil
	}
	n.addBuffered(-freed)
	c.cp = cp
	c.lastSave = time.Now()
	return nil
}

func pkStats(pk *schemapb.FieldSchema, col column.Column) (*storage.PKStats, error) {
	st := storage.NewPKStats(pk.GetFieldID(), pk.GetDataType(), uint(col.Len()))
	switch c := col.(type) {
	case *column.Ints:
		for _, v := range c.Data {
			st.AddInt64(v)
		}
	case *column.Strings:
		for _, v := range c.Data {
			st.AddString(v)
		}
	default:
		return nil, fmt.Errorf("datanode: primary key of type %s", col.Type())
	}
	return st, nil
}

// writeCompoundStats writes the merged stats file `1` of a flushed segment:
// every per-sync stats log of its history plus this sync's.
func (c *channel) writeCompoundStats(ctx context.Context, id, part int64, info catalog.SegmentInfo, known bool,
	current []*storage.PKStats, ss *catalog.SegmentSync,
) error {
	n := c.node
	pk := c.coll.PKField()
	var all []*storage.PKStats
	if known {
		for _, l := range info.Statslogs[pk.GetFieldID()] {
			if l.LogID == 1 {
				continue
			}
			key := storage.StatsLogKey(n.cfg.RootPath, c.coll.ID, info.PartitionID, id, pk.GetFieldID(), l.LogID)
			data, err := n.objects.Get(ctx, key)
			if err != nil {
				return fmt.Errorf("read stats %s: %w", key, err)
			}
			st, err := storage.UnmarshalStats(data)
			if err != nil {
				return fmt.Errorf("decode stats %s: %w", key, err)
			}
			all = append(all, st...)
		}
	}
	all = append(all, current...)
	if len(all) == 0 {
		return nil // an empty segment has no stats
	}
	data, err := storage.MarshalCompoundStats(all)
	if err != nil {
		return err
	}
	key := storage.CompoundStatsLogKey(n.cfg.RootPath, c.coll.ID, part, id, pk.GetFieldID())
	if err := n.objects.Put(ctx, key, data); err != nil {
		return err
	}
	ss.Statslogs[pk.GetFieldID()] = append(ss.Statslogs[pk.GetFieldID()], catalog.Binlog{LogID: 1, Size: int64(len(data))})
	return nil
}

// writeDeltas writes the delete buffer as the delta log of a new L0 segment.
func (c *channel) writeDeltas(ctx context.Context) (*catalog.SegmentInfo, error) {
	n := c.node
	first, err := n.ids.Allocate(ctx, 2)
	if err != nil {
		return nil, err
	}
	segID, logID := int64(first), int64(first)+1
	const allPartitions = -1
	d := c.dels
	tsFrom, tsTo := d.tss[0], d.tss[0]
	for _, t := range d.tss {
		tsFrom, tsTo = min(tsFrom, t), max(tsTo, t)
	}
	data, err := storage.EncodeDeltaLog(storage.Descriptor{CollectionID: c.coll.ID, PartitionID: allPartitions,
		SegmentID: segID, FieldID: -1}, c.coll.PKField().GetDataType(), d.pks, d.tss)
	if err != nil {
		return nil, fmt.Errorf("encode delta log: %w", err)
	}
	key := storage.DeltaLogKey(n.cfg.RootPath, c.coll.ID, allPartitions, segID, logID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return nil, err
	}
	return &catalog.SegmentInfo{ID: segID, CollectionID: c.coll.ID, PartitionID: allPartitions, VChannel: c.vchannel,
		State: catalog.SegmentFlushed, Level: catalog.LevelL0, NumRows: int64(len(d.tss)),
		Deltalogs:     []catalog.Binlog{{LogID: logID, Entries: int64(len(d.tss)), TsFrom: tsFrom, TsTo: tsTo, Size: int64(len(data))}},
		StartPosition: &d.start, SyncedOffset: c.lastOffset, CreatedAt: time.Now().UnixMilli()}, nil
}
