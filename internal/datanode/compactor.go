package datanode

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// CompactionCoord hands out compaction plans and commits their results.
type CompactionCoord interface {
	ClaimCompaction(ctx context.Context, executor string, wait time.Duration) (catalog.CompactionPlan, bool, error)
	CompleteCompaction(ctx context.Context, res catalog.CompactionResult, execErr error) error
}

// RunCompactor executes compaction plans one at a time until ctx ends.
// Every file a plan writes is new (fresh log and segment IDs); nothing is
// visible until the coordinator commits the result, so a crash at any point
// leaves the inputs valid and the outputs as orphans for garbage collection.
//
// When ctx ends the plan in hand is abandoned between two steps (every loop
// over targets, inputs, fields and output chunks checks ctx) and not
// reported: the coordinator keeps plans in memory only, so after a restart
// it plans the same compaction again from the unchanged inputs.
//
// name identifies the executor and must be unique among the executors of
// one coordinator (a claim under a name takes back a plan still executing
// under it); each result carries the plan's attempt, so one the
// coordinator released meanwhile (it declared this node dead) is refused.
func (n *Node) RunCompactor(ctx context.Context, coord CompactionCoord, name string) error {
	for {
		plan, ok, err := coord.ClaimCompaction(ctx, name, time.Second)
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
		res.PlanID, res.Attempt = plan.ID, plan.Attempt
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
	case catalog.CompactionClustering:
		return n.compactClustering(ctx, coll, plan)
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
		if err := ctx.Err(); err != nil {
			return res, err
		}
		stats, err := n.readStats(ctx, coll, t)
		if err != nil {
			return res, err
		}
		hit, _ := column.New(pkField)
		var hitTs []uint64
		for i, p := range pks {
			for r := 0; r < p.Len(); r++ {
				if mayContain(stats, column.KeyAt(p, r)) {
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
		data, err := storage.EncodeDeltaLog(storage.Descriptor{
			CollectionID: t.CollectionID, PartitionID: t.PartitionID,
			SegmentID: t.ID, FieldID: -1,
		}, pkField.GetDataType(), hit, hitTs)
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

// survivors are the rows of a plan's inputs that are neither deleted nor expired.
type survivors struct {
	cols           map[int64]column.Column // every field incl. system fields
	rows           int64
	synced         int64
	flushTS        uint64
	inputIDs       []int64
	pkID, maxInRow int64
}

// readSurvivors reads the inputs, dropping rows deleted by the inputs' own
// delta logs or the plan's L0 deletes, and rows past the TTL.
func (n *Node) readSurvivors(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan) (*survivors, error) {
	pks, tss, err := n.readDeletes(ctx, append(append([]catalog.SegmentInfo(nil), plan.Inputs...), plan.Deletes...))
	if err != nil {
		return nil, err
	}
	latestDelete := map[any]uint64{}
	for i, p := range pks {
		for r := 0; r < p.Len(); r++ {
			k := column.KeyAt(p, r)
			latestDelete[k] = max(latestDelete[k], tss[i][r])
		}
	}
	sv := &survivors{synced: -1, pkID: coll.PKField().GetFieldID()}
	// Each input's surviving rows are taken column by column (one exact-size
	// copy, the input's decoded columns are garbage right after); several
	// inputs are then concatenated.
	var parts []map[int64]column.Column
	for _, in := range plan.Inputs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cols, err := n.readSegment(ctx, coll, in)
		if err != nil {
			return nil, err
		}
		tsCol := cols[1].(*column.Ints)
		pkCol := cols[sv.pkID]
		keep := make([]int, 0, tsCol.Len())
		for r := 0; r < tsCol.Len(); r++ {
			ts := uint64(tsCol.Data[r])
			if d, ok := latestDelete[column.KeyAt(pkCol, r)]; ok && d > ts {
				continue
			}
			if plan.ExpireBefore != 0 && ts < plan.ExpireBefore {
				continue
			}
			keep = append(keep, r)
		}
		part := cols
		if len(keep) < tsCol.Len() {
			part = make(map[int64]column.Column, len(cols))
			for id, c := range cols {
				part[id] = c.Take(keep)
			}
		}
		parts = append(parts, part)
		sv.rows += int64(len(keep))
		sv.synced = max(sv.synced, in.SyncedOffset)
		sv.flushTS = max(sv.flushTS, in.FlushTS)
		sv.inputIDs = append(sv.inputIDs, in.ID)
		sv.maxInRow = max(sv.maxInRow, in.MaxRows)
	}
	if len(parts) == 1 {
		sv.cols = parts[0]
		return sv, nil
	}
	sv.cols = map[int64]column.Column{}
	for _, f := range coll.Schema.GetFields() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cols := make([]column.Column, len(parts))
		for i := range parts {
			cols[i] = parts[i][f.GetFieldID()]
			delete(parts[i], f.GetFieldID()) // let the part's column go
		}
		sv.cols[f.GetFieldID()] = column.Concat(cols)
	}
	return sv, nil
}

// writeOutput writes rows as a new flushed segment (binlogs, stats, merged stats).
func (n *Node) writeOutput(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan, sv *survivors,
	cols map[int64]column.Column,
) (catalog.SegmentInfo, error) {
	tsCol := cols[1].(*column.Ints)
	rows := int64(tsCol.Len())
	tsFrom, tsTo := uint64(tsCol.Data[0]), uint64(tsCol.Data[0])
	for _, t := range tsCol.Data {
		tsFrom, tsTo = min(tsFrom, uint64(t)), max(tsTo, uint64(t))
	}
	segID, err := n.ids.Allocate(ctx, 1)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	files, err := n.writeSegment(ctx, coll, plan.PartitionID, int64(segID), cols, rows, tsFrom, tsTo)
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	data, err := storage.MarshalCompoundStats([]*storage.PKStats{files.stats})
	if err != nil {
		return catalog.SegmentInfo{}, err
	}
	key := storage.CompoundStatsLogKey(n.cfg.RootPath, coll.ID, plan.PartitionID, int64(segID), sv.pkID)
	if err := n.objects.Put(ctx, key, data); err != nil {
		return catalog.SegmentInfo{}, err
	}
	files.statslogs[sv.pkID] = append(files.statslogs[sv.pkID], catalog.Binlog{LogID: storage.CompoundStatsLogID, Size: int64(len(data))})
	return catalog.SegmentInfo{
		ID: int64(segID), CollectionID: coll.ID, PartitionID: plan.PartitionID,
		VChannel: plan.VChannel, State: catalog.SegmentFlushed, Level: catalog.LevelL1, NumRows: rows,
		MaxRows: sv.maxInRow, Binlogs: files.binlogs, Statslogs: files.statslogs,
		SyncedOffset: sv.synced, FlushTS: sv.flushTS, CompactedFrom: sv.inputIDs, Sorted: true,
	}, nil
}

// compactMix merges the input segments into one sorted by primary key,
// dropping deleted rows (the inputs' own delta logs and the plan's L0
// deletes) and expired rows. A plan of one segment sorts it: the sort
// compaction of a segment synced in several batches.
func (n *Node) compactMix(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan) (catalog.CompactionResult, error) {
	var res catalog.CompactionResult
	sv, err := n.readSurvivors(ctx, coll, plan)
	if err != nil || sv.rows == 0 {
		return res, err // no rows left: the inputs are simply dropped
	}
	out, err := n.writeOutput(ctx, coll, plan, sv, sv.cols)
	if err != nil {
		return res, err
	}
	res.Outputs = []catalog.SegmentInfo{out}
	return res, nil
}

// compactClustering sorts the surviving rows by the clustering key and
// writes them as L2 segments of at most plan.MaxRows rows, each recording
// its key range (rows with a null key go to a last segment without one).
func (n *Node) compactClustering(ctx context.Context, coll *catalog.Collection, plan catalog.CompactionPlan) (catalog.CompactionResult, error) {
	var res catalog.CompactionResult
	sv, err := n.readSurvivors(ctx, coll, plan)
	if err != nil || sv.rows == 0 {
		return res, err
	}
	key := sv.cols[plan.ClusteringField]
	if key == nil {
		return res, fmt.Errorf("clustering field %d not in collection %d", plan.ClusteringField, coll.ID)
	}
	var order, nulls []int
	for i := 0; i < int(sv.rows); i++ {
		if key.IsNull(i) {
			nulls = append(nulls, i)
		} else {
			order = append(order, i)
		}
	}
	less, kind := keyLess(key)
	if less == nil {
		return res, fmt.Errorf("clustering on a %s field is not supported", key.Type())
	}
	sort.SliceStable(order, func(a, b int) bool { return less(order[a], order[b]) })
	maxRows := int(max(plan.MaxRows, 1))
	var chunks [][]int
	for i := 0; i < len(order); {
		j := min(i+maxRows, len(order))
		// Keep equal keys together so ranges do not overlap.
		for j < len(order) && !less(order[j-1], order[j]) {
			j++
		}
		chunks = append(chunks, order[i:j])
		i = j
	}
	if len(nulls) > 0 {
		chunks = append(chunks, nulls)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	for ci, rows := range chunks {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		cols := map[int64]column.Column{}
		for id, c := range sv.cols {
			cols[id] = c.Take(rows)
		}
		out, err := n.writeOutput(ctx, coll, plan, sv, cols)
		if err != nil {
			return res, err
		}
		if !(len(nulls) > 0 && ci == len(chunks)-1) {
			out.KeyRange = keyRange(plan.ClusteringField, kind, key, rows[0], rows[len(rows)-1])
		}
		res.Outputs = append(res.Outputs, out)
	}
	return res, nil
}

// keyLess orders rows of a clustering-key column.
func keyLess(c column.Column) (func(i, j int) bool, string) {
	switch c := c.(type) {
	case *column.Ints:
		return func(i, j int) bool { return c.Data[i] < c.Data[j] }, "int"
	case *column.Floats:
		return func(i, j int) bool { return c.Data[i] < c.Data[j] }, "float"
	case *column.Strings:
		return func(i, j int) bool { return c.Data[i] < c.Data[j] }, "string"
	}
	return nil, ""
}

func keyRange(field int64, kind string, c column.Column, lo, hi int) *catalog.KeyRange {
	r := &catalog.KeyRange{FieldID: field, Kind: kind}
	switch c := c.(type) {
	case *column.Ints:
		r.Ints = [2]int64{c.Data[lo], c.Data[hi]}
	case *column.Floats:
		r.Floats = [2]float64{c.Data[lo], c.Data[hi]}
	case *column.Strings:
		r.Strings = [2]string{c.Data[lo], c.Data[hi]}
	}
	return r
}

// readSegment reads every field of a flushed segment (system fields included).
func (n *Node) readSegment(ctx context.Context, coll *catalog.Collection, s catalog.SegmentInfo) (map[int64]column.Column, error) {
	cols := map[int64]column.Column{}
	for _, f := range coll.Schema.GetFields() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := storage.ReadField(ctx, n.objects, storage.FieldLogs{
			Root:       n.cfg.RootPath,
			Collection: s.CollectionID, Partition: s.PartitionID, ID: s.ID, LogIDs: s.LogIDs(f.GetFieldID()), Rows: s.FieldLogRows(),
		}, f)
		if err != nil {
			return nil, err
		}
		cols[f.GetFieldID()] = c
	}
	if _, ok := cols[1].(*column.Ints); !ok {
		return nil, fmt.Errorf("segment %d has no timestamp field", s.ID)
	}
	return cols, nil
}
