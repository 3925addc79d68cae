package datanode

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/wal"
)

// segBuffer holds a segment's rows that are not in object storage yet.
type segBuffer struct {
	id        int64
	partition int64
	cols      map[int64]column.Column // every field incl. RowID (0) and Timestamp (1)
	rows      int64
	bytes     int64
	start     catalog.Position // first unsynced message
	tsFrom    uint64
	tsTo      uint64
	lastOff   int64
	createdAt time.Time
}

// deleteBuffer holds the channel's deletes that are not in delta logs yet.
type deleteBuffer struct {
	pks column.Column
	// runs holds the keys' timestamps, a run for each Delete message (which
	// stamps all its keys with its time tick) rather than one a key.
	runs  []tsRun
	start catalog.Position
	bytes int64 // the keys' and timestamps' size in a delta log (the flush threshold)
}

// tsRun is n consecutive keys of a delete buffer deleted at ts.
type tsRun struct {
	ts uint64
	n  int
}

// timestamps returns each buffered key's timestamp, in key order.
func (d *deleteBuffer) timestamps() []uint64 {
	n := 0
	for _, r := range d.runs {
		n += r.n
	}
	tss := make([]uint64, 0, n)
	for _, r := range d.runs {
		for range r.n {
			tss = append(tss, r.ts)
		}
	}
	return tss
}

// channel is the flowgraph of one vchannel.
type channel struct {
	node     *Node
	coll     *catalog.Collection
	vchannel string
	cp       catalog.ChannelCheckpoint
	dropped  bool

	// worker runs the channel's syncs (syncworker.go); cp, synced and
	// flushed are as if every sync it was given had completed.
	worker *syncWorker

	segs    map[int64]*segBuffer
	dels    *deleteBuffer
	synced  map[int64]int64 // segment → offset through which rows are synced
	flushed map[int64]bool

	lastOffset int64
	lastTS     uint64
	// midRecord is set while more messages of the record at lastOffset
	// follow. A sync then would record lastOffset as synced (and the
	// checkpoint past it) and lose the rest of the record, such as the
	// insert of an upsert whose delete was just handled; syncs wait for the
	// record's last message. (Flush records hold one Flush per vchannel.)
	midRecord    bool
	lastSave     time.Time
	lastPeriodic time.Time
}

// tick handles a pchannel-wide time tick.
func (c *channel) tick(ctx context.Context, e wal.Entry) error {
	if e.Position.Offset < c.cp.Position.Offset {
		return nil
	}
	c.lastOffset, c.lastTS = e.Position.Offset, e.Message.TimeTick
	c.midRecord = e.More
	return c.maintain(ctx)
}

// maintain runs the periodic sync and saves an idle channel's checkpoint.
func (c *channel) maintain(ctx context.Context) error {
	if c.midRecord {
		return nil
	}
	now := time.Now()
	cfg := c.node.cfg
	if now.Sub(c.lastPeriodic) >= cfg.SyncPeriod/4 {
		c.lastPeriodic = now
		var old []int64
		for _, id := range sortedIDs(c.segs) {
			if now.Sub(c.segs[id].createdAt) >= cfg.SyncPeriod {
				old = append(old, id)
			}
		}
		if len(old) > 0 {
			return c.requestSync(ctx, old, withDeletes)
		}
	}
	if len(c.segs) == 0 && c.dels == nil && now.Sub(c.lastSave) >= cfg.CheckpointInterval &&
		c.lastOffset+1 > c.cp.Position.Offset {
		return c.requestSync(ctx, nil, 0) // the checkpoint only
	}
	return nil
}

func (c *channel) handle(ctx context.Context, e wal.Entry) error {
	m := e.Message
	off := e.Position.Offset
	if off < c.cp.Position.Offset {
		return nil // already persisted
	}
	c.lastOffset, c.lastTS = off, m.TimeTick
	c.midRecord = e.More
	switch m.Type {
	case wal.TypeInsert:
		if err := c.insert(ctx, e); err != nil {
			return err
		}
		// An upsert's deletes arrive mid-record (its insert follows), where
		// they cannot sync; its end is the first chance.
		if c.deletesDue() {
			return c.requestSync(ctx, nil, withDeletes)
		}
	case wal.TypeDelete:
		if off <= c.cp.DeltaSyncedOffset {
			return nil
		}
		req := &msgpb.DeleteRequest{}
		if err := proto.Unmarshal(m.Payload, req); err != nil {
			return poison(fmt.Errorf("decode delete: %w", err))
		}
		c.bufferDelete(req, e)
		if c.deletesDue() {
			return c.requestSync(ctx, nil, withDeletes)
		}
	case wal.TypeFlush:
		ids, err := wal.DecodeFlush(m.Payload)
		if err != nil {
			return poison(err)
		}
		if err := c.discardDropped(ctx); err != nil {
			return err
		}
		var todo []int64
		for _, id := range ids {
			if c.flushed[id] {
				continue
			}
			if c.segs[id] == nil {
				// Replayed after a restart, the Flush of a segment that
				// compaction or a drop has removed since: nothing to write.
				info, ok, err := c.node.coord.Segment(ctx, id)
				if err != nil {
					return err
				}
				if !ok || info.State == catalog.SegmentDropped {
					c.flushed[id] = true
					continue
				}
			}
			todo = append(todo, id)
		}
		return c.requestSync(ctx, todo, asFlush|withDeletes)
	case wal.TypeDropCollection:
		// The collection's rows are never needed again: syncs still queued
		// are dropped (garbage collection removes files a cut-short one
		// wrote), and none reports a checkpoint after the drop.
		c.worker.stop()
		c.discard(func(*segBuffer) bool { return true })
		c.dels = nil
		c.dropped = true
		return nil
	case wal.TypeSchemaChange:
		if err := c.changeSchema(m.Payload); err != nil {
			return poison(err)
		}
	case wal.TypeDropPartition:
		if len(m.Payload) == 8 {
			part := int64(binary.LittleEndian.Uint64(m.Payload))
			c.discard(func(b *segBuffer) bool { return b.partition == part })
		}
	}
	return c.maintain(ctx)
}

// deletesDue reports whether the delete buffer has reached the sync size
// at a point where it may sync (the end of a record).
func (c *channel) deletesDue() bool {
	return c.dels != nil && !c.midRecord && c.dels.bytes >= c.node.cfg.SegmentBufferSize
}

func (c *channel) discard(match func(*segBuffer) bool) {
	for id, b := range c.segs {
		if match(b) {
			c.node.addBuffered(-b.bytes)
			delete(c.segs, id)
		}
	}
}

func (c *channel) insert(ctx context.Context, e wal.Entry) error {
	req := &msgpb.InsertRequest{}
	if err := proto.Unmarshal(e.Message.Payload, req); err != nil {
		return poison(fmt.Errorf("decode insert: %w", err))
	}
	seg := req.GetSegmentID()
	if c.flushed[seg] {
		return nil
	}
	if s, ok := c.synced[seg]; ok && e.Position.Offset <= s {
		return nil
	}
	// Every column is decoded and checked before anything is buffered: a
	// message that does not fit the schema is refused whole (and
	// quarantined by the caller), never half applied.
	srcs, err := c.insertColumns(req, e.Message.TimeTick)
	if err != nil {
		return poison(err)
	}
	n := int(req.GetNumRows())
	b := c.segs[seg]
	var info catalog.SegmentInfo
	if b == nil {
		var admitted bool
		if info, admitted, err = c.admit(ctx, seg); err != nil || !admitted {
			return err
		}
		b = &segBuffer{
			id: seg, partition: req.GetPartitionID(), cols: map[int64]column.Column{},
			start: catalog.Position{Offset: e.Position.Offset, TimeTick: e.Message.TimeTick}, createdAt: time.Now(),
		}
		for _, f := range c.coll.Schema.GetFields() {
			col, err := column.New(f)
			if err != nil {
				return poison(err)
			}
			b.cols[f.GetFieldID()] = col
		}
		if err := c.reportStart(ctx, info, b); err != nil {
			return err
		}
		c.segs[seg] = b
	}
	var added int64
	for i, f := range c.coll.Schema.GetFields() {
		column.AppendAll(b.cols[f.GetFieldID()], srcs[i])
		added += int64(srcs[i].MemorySize())
	}
	if b.rows == 0 || e.Message.TimeTick < b.tsFrom {
		b.tsFrom = e.Message.TimeTick
	}
	b.tsTo = max(b.tsTo, e.Message.TimeTick)
	b.rows += int64(n)
	b.bytes += added
	b.lastOff = e.Position.Offset
	total := c.node.addBuffered(added)
	switch {
	case c.midRecord:
		return nil // synced at the record's end or later
	case b.bytes >= c.node.cfg.SegmentBufferSize:
		return c.requestSync(ctx, []int64{seg}, 0)
	case total >= c.node.cfg.MemoryHighWatermark:
		return c.requestSync(ctx, []int64{c.largest()}, 0)
	}
	return nil
}

// insertColumns decodes an insert's rows into one column per schema field
// (in schema order, with the row IDs and the message's timestamp as fields
// 0 and 1), checking that every field is present, fits its type and has
// the message's row count.
func (c *channel) insertColumns(req *msgpb.InsertRequest, ts uint64) ([]column.Column, error) {
	n := int(req.GetNumRows())
	user, err := column.InsertColumns(c.coll.Schema, req.GetFieldsData(), n)
	if err != nil {
		return nil, err
	}
	fields := c.coll.Schema.GetFields()
	out := make([]column.Column, len(fields))
	for i, f := range fields {
		var src column.Column
		switch f.GetFieldID() {
		case 0:
			src = &column.Ints{T: schemapb.DataType_Int64, Data: req.GetRowIDs()}
		case 1:
			d := make([]int64, n)
			for i := range d {
				d[i] = int64(ts)
			}
			src = &column.Ints{T: schemapb.DataType_Int64, Data: d}
		default:
			src = user[f.GetFieldID()]
		}
		if src == nil || src.Len() != n {
			return nil, fmt.Errorf("field %q does not have the insert's %d rows", f.GetName(), n)
		}
		out[i] = src
	}
	return out, nil
}

// reportStart records where a segment's rows start the first time the
// channel buffers it (the coordinator's record has no start position until
// then): L0 compaction may apply deletes only older than every unflushed
// segment's first row, and treats a segment of unknown start as older than
// all of them. The report goes through the worker, behind the syncs queued
// before it, with the checkpoint the worker last reported. info is the
// segment's record as admit read it. It fails only when ctx ends.
func (c *channel) reportStart(ctx context.Context, info catalog.SegmentInfo, b *segBuffer) error {
	if info.StartPosition != nil {
		return nil
	}
	start := b.start
	return c.worker.submit(ctx, &syncJob{kind: jobStart, start: catalog.SegmentSync{
		SegmentID:    b.id,
		CollectionID: info.CollectionID, PartitionID: b.partition, StartPosition: &start, SyncedOffset: -1,
	}})
}

func (c *channel) largest() int64 {
	var best *segBuffer
	for _, b := range c.segs {
		if best == nil || b.bytes > best.bytes {
			best = b
		}
	}
	return best.id
}

func (c *channel) bufferDelete(req *msgpb.DeleteRequest, e wal.Entry) {
	pks := column.FromIDs(req.GetPrimaryKeys(), req.GetInt64PrimaryKeys())
	if pks.Len() == 0 {
		return
	}
	if c.dels == nil {
		first, _ := column.New(c.coll.PKField())
		c.dels = &deleteBuffer{pks: first, start: catalog.Position{Offset: e.Position.Offset, TimeTick: e.Message.TimeTick}}
	}
	for i := 0; i < pks.Len(); i++ {
		c.dels.pks.AppendFrom(pks, i)
	}
	if last := len(c.dels.runs) - 1; last >= 0 && c.dels.runs[last].ts == e.Message.TimeTick {
		c.dels.runs[last].n += pks.Len()
	} else {
		c.dels.runs = append(c.dels.runs, tsRun{ts: e.Message.TimeTick, n: pks.Len()})
	}
	c.dels.bytes += int64(pks.MemorySize() + 8*pks.Len())
}

// admit decides, on the first insert of a segment this channel does not
// buffer, whether to buffer it: only while the coordinator has it Growing or
// Sealed. A Flushed segment's rows are already in object storage; a Dropped
// or unknown one was compacted away (or its partition dropped) and must not
// be written again. It returns the record it read, or the error of a
// coordinator that could not say (nothing is decided then).
func (c *channel) admit(ctx context.Context, seg int64) (catalog.SegmentInfo, bool, error) {
	info, ok, err := c.node.coord.Segment(ctx, seg)
	if err != nil {
		return catalog.SegmentInfo{}, false, err
	}
	if ok && (info.State == catalog.SegmentGrowing || info.State == catalog.SegmentSealed) {
		return info, true, nil
	}
	c.flushed[seg] = true
	return info, false, nil
}
