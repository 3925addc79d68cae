package datanode

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// CompactionCoord hands out compaction plans and commits their results.
type CompactionCoord interface {
	ClaimCompaction(ctx context.Context, wait time.Duration) (catalog.CompactionPlan, bool, error)
	CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error
}

// RunCompactor executes compaction plans one at a time until ctx ends.
// Every file a plan writes is new (fresh log and segment IDs); nothing is
// visible until the coordinator commits the result, so a crash at any point
// leaves the inputs valid and the outputs as orphans for garbage collection.
func (n *Node) RunCompactor(ctx context.Context, coord CompactionCoord) error {
	for {
		plan, ok, err := coord.ClaimCompaction(ctx, time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			n.logger.Warn("claim compaction failed", "err", err)
			continue
		}
		if !ok {
			continue
		}
		start := time.Now()
		res, execErr := n.compact(ctx, plan)
		if ctx.Err() != nil {
			return nil
		}
		res.PlanID = plan.ID
		if err := coord.CompleteCompaction(ctx, res, execErr); err != nil && ctx.Err() == nil {
			n.logger.Warn("commit compaction failed", "plan", plan.ID, "err", err)
			continue
		}
		n.logger.Info("compaction done", "plan", plan.ID, "type", plan.Type.String(), "inputs", len(plan.Inputs),
			"took", time.Since(start).String(), "err", execErr)
	}
}

func (n *Node) compact(ctx context.Context, plan catalog.CompactionPlan) (catalog.CompactionResult, error) {
	coll, err := n.colls.CollectionByID(plan.CollectionID)
	if err != nil {
		return catalog.CompactionResult{}, err
	}
	switch plan.Type {
	case catalog.CompactionL0:
		return n.compactL0(ctx, coll, plan)
	case catalog.CompactionMix:
		return n.compactMix(ctx, coll, plan)
	}
	return catalog.CompactionResult{}, fmt.Errorf("unknown compaction type %d", plan.Type)
}

// readDeletes reads every delta log of the segments.
func (n *Node) readDeletes(ctx context.Context, segs []catalog.SegmentInfo) ([]column.Column, [][]uint64, error) {
	var pks []column.Column
	var tss [][]uint64
	for _, s := range segs {
		for _, l := range s.Deltalogs {
			key := storage.DeltaLogKey(n.cfg.RootPath, s.CollectionID, s.PartitionID, s.ID, l.LogID)
			data, err := n.objects.Get(ctx, key)
			if err != nil {
				return nil, nil, err
			}
			p, t, err := storage.DecodeDeltaLog(data)
			if err != nil {
				return nil, nil, fmt.Errorf("decode %s: %w", key, err)
			}
			pks, tss = append(pks, p), append(tss, t)
		}
	}
	return pks, tss, nil
}

// readStats reads a segment's PK stats (the merged file when present).
func (n *Node) readStats(ctx context.Context, coll *catalog.Collection, s catalog.SegmentInfo) ([]*storage.PKStats, error) {
	pk := coll.PKField().GetFieldID()
	logs := s.Statslogs[pk]
	for _, l := range logs {
		if l.LogID == storage.CompoundStatsLogID {
			logs = []catalog.Binlog{l}
			break
		}
	}
	var out []*storage.PKStats
	for _, l := range logs {
		key := storage.StatsLogKey(n.cfg.RootPath, s.CollectionID, s.PartitionID, s.ID, pk, l.LogID)
		data, err := n.objects.Get(ctx, key)
		if err != nil {
			return nil, err
		}
		st, err := storage.UnmarshalStats(data)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", key, err)
		}
		out = append(out, st...)
	}
	return out, nil
}

func mayContain(stats []*storage.PKStats, pk any) bool {
	if len(stats) == 0 {
		return true
	}
	for _, st := range stats {
		if st.MayContain(pk) {
			return true
		}
	}
	return false
}

// compactL0 writes, for every target segment, a delta log with the L0
// deletes whose keys its PK bloom filter and min/max may hold.
func (n *Node) compactL0(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan) (catalog.CompactionResult, error) {
	res := catalog.CompactionResult{Deltalogs: map[int64][]catalog.Binlog{}}
	pks, tss, err := n.readDeletes(ctx, plan.Inputs)
	if err != nil {
		return res, err
	}
	pkField := coll.PKField()
	for _, t := range plan.Targets {
		stats, err := n.readStats(ctx, coll, t)
		if err != nil {
			return res, err
		}
		hit, _ := column.New(pkField)
		var hitTs []uint64
		for i, p := range pks {
			for r := 0; r < p.Len(); r++ {
				if mayContain(stats, pkValue(p, r)) {
					hit.AppendFrom(p, r)
					hitTs = append(hitTs, tss[i][r])
				}
			}
		}
		if hit.Len() == 0 {
			continue
		}
		logID, err := n.ids.Allocate(ctx, 1)
		if err != nil {
			return res, err
		}
		data, err := storage.EncodeDeltaLog(storage.Descriptor{CollectionID: t.CollectionID, PartitionID: t.PartitionID,
			SegmentID: t.ID, FieldID: -1}, pkField.GetDataType(), hit, hitTs)
		if err != nil {
			return res, err
		}
		key := storage.DeltaLogKey(n.cfg.RootPath, t.CollectionID, t.PartitionID, t.ID, int64(logID))
		if err := n.objects.Put(ctx, key, data); err != nil {
			return res, err
		}
		from, to := hitTs[0], hitTs[0]
		for _, x := range hitTs {
			from, to = min(from, x), max(to, x)
		}
		res.Deltalogs[t.ID] = []catalog.Binlog{{LogID: int64(logID), Entries: int64(len(hitTs)), TsFrom: from, TsTo: to, Size: int64(len(data))}}
	}
	return res, nil
}

func pkValue(c column.Column, i int) any {
	switch c := c.(type) {
	case *column.Ints:
		return c.Data[i]
	case *column.Strings:
		return c.Data[i]
	}
	return nil
}

// compactMix merges the input segments into one, dropping deleted rows
// (the inputs' own delta logs and the plan's L0 deletes) and expired rows.
func (n *Node) compactMix(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan) (catalog.CompactionResult, error) {
	var res catalog.CompactionResult
	pks, tss, err := n.readDeletes(ctx, append(append([]catalog.SegmentInfo(nil), plan.Inputs...), plan.Deletes...))
	if err != nil {
		return res, err
	}
	latestDelete := map[any]uint64{}
	for i, p := range pks {
		for r := 0; r < p.Len(); r++ {
			k := pkValue(p, r)
			latestDelete[k] = max(latestDelete[k], tss[i][r])
		}
	}
	out := map[int64]column.Column{}
	for _, f := range coll.Schema.GetFields() {
		c, err := column.New(f)
		if err != nil {
			return res, err
		}
		out[f.GetFieldID()] = c
	}
	pkID := coll.PKField().GetFieldID()
	var rows int64
	var tsFrom, tsTo uint64
	var synced int64 = -1
	var flushTS uint64
	for _, in := range plan.Inputs {
		cols, err := n.readSegment(ctx, coll, in)
		if err != nil {
			return res, err
		}
		tsCol := cols[1].(*column.Ints)
		pkCol := cols[pkID]
		for r := 0; r < tsCol.Len(); r++ {
			ts := uint64(tsCol.Data[r])
			if d, ok := latestDelete[pkValue(pkCol, r)]; ok && d > ts {
				continue
			}
			if plan.ExpireBefore != 0 && ts < plan.ExpireBefore {
				continue
			}
			for id, dst := range out {
				dst.AppendFrom(cols[id], r)
			}
			if rows == 0 || ts < tsFrom {
				tsFrom = ts
			}
			tsTo = max(tsTo, ts)
			rows++
		}
		synced = max(synced, in.SyncedOffset)
		flushTS = max(flushTS, in.FlushTS)
	}
	if rows == 0 {
		return res, nil // every row was deleted or expired: the inputs are simply dropped
	}
	segID, err := n.ids.Allocate(ctx, 1)
	if err != nil {
		return res, err
	}
	files, err := n.writeSegment(ctx, coll, plan.PartitionID, int64(segID), out, rows, tsFrom, tsTo)
	if err != nil {
		return res, err
	}
	data, err := storage.MarshalCompoundStats([]*storage.PKStats{files.stats})
	if err != nil {
		return res, err
	}
	key := storage.CompoundStatsLogKey(n.cfg.RootPath, coll.ID, plan.PartitionID, int64(segID), pkID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return res, err
	}
	files.statslogs[pkID] = append(files.statslogs[pkID], catalog.Binlog{LogID: storage.CompoundStatsLogID, Size: int64(len(data))})
	ids := make([]int64, len(plan.Inputs))
	for i, in := range plan.Inputs {
		ids[i] = in.ID
	}
	res.Output = &catalog.SegmentInfo{ID: int64(segID), CollectionID: coll.ID, PartitionID: plan.PartitionID,
		VChannel: plan.VChannel, State: catalog.SegmentFlushed, Level: catalog.LevelL1, NumRows: rows,
		MaxRows: plan.Inputs[0].MaxRows, Binlogs: files.binlogs, Statslogs: files.statslogs,
		SyncedOffset: synced, FlushTS: flushTS, CompactedFrom: ids}
	return res, nil
}

// readSegment reads every field of a flushed segment (system fields included).
func (n *Node) readSegment(ctx context.Context, coll *catalog.Collection, s catalog.SegmentInfo) (map[int64]column.Column, error) {
	cols := map[int64]column.Column{}
	for _, f := range coll.Schema.GetFields() {
		var acc column.Column
		for _, l := range s.Binlogs[f.GetFieldID()] {
			key := storage.InsertLogKey(n.cfg.RootPath, s.CollectionID, s.PartitionID, s.ID, f.GetFieldID(), l.LogID)
			data, err := n.objects.Get(ctx, key)
			if err != nil {
				return nil, err
			}
			bl, err := storage.DecodeBinlog(data, storage.WithElementType(f.GetElementType()))
			if err != nil {
				return nil, fmt.Errorf("decode %s: %w", key, err)
			}
			c := bl.Column()
			if acc == nil {
				acc = c
				continue
			}
			column.AppendAll(acc, c)
		}
		if acc == nil {
			return nil, fmt.Errorf("segment %d has no binlogs for field %d", s.ID, f.GetFieldID())
		}
		cols[f.GetFieldID()] = acc
	}
	if _, ok := cols[1].(*column.Ints); !ok {
		return nil, fmt.Errorf("segment %d has no timestamp field", s.ID)
	}
	return cols, nil
}
