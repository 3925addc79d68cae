package datacoord

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/strata-db/strata/internal/catalog"
)

// Segment assignment runs under the pchannel lock of the insert it serves
// (wal.Writer.AppendBuild), so it must not wait for the meta store there:
// in cluster mode that is an etcd round trip, and every insert, seal and
// time tick of the pchannel would queue behind it.
//
//   - Growing segments that take rows are indexed by (collection,
//     partition, vchannel), so finding one with room is a map lookup. The
//     index is pruned lazily: a segment that was sealed, fenced or dropped
//     since it was indexed is removed when a lookup meets it.
//   - Each vchannel that has been written keeps a spare: an empty Growing
//     segment, persisted with Spare set, made by Run's spare loop outside
//     any pchannel lock. When no indexed segment has room, assignment claims
//     the spare in memory (setting its partition and size), asks the loop
//     for a new one, and returns at once. Only when there is no spare yet
//     (the first insert of a vchannel, or a burst that outruns the loop)
//     does assignment persist a new segment itself, as it always did.
//
// A spare is invisible to clients (Segments), to the seal policy and to
// compaction planning. Claiming it is not persisted: the next write of its
// record (the data node reports the segment's start position on its first
// buffered row) persists the claim, and a clean stop persists the claims
// not reported yet (saveClaims). After a crash a record that still
// says Spare is fenced like every segment growing at start-up, hidden from
// clients, and either gets rows from the data node's replay (its first sync
// clears the mark and sets the partition) or is collected: an empty spare is
// sealed once idle for MaxIdle (or by the next Flush or an L0 compaction
// blocker), and a Spare record the data node reports flushed with no rows is
// Dropped rather than Flushed, so garbage collection removes it.

// growKey indexes growing segments for assignment.
type growKey struct {
	collection, partition int64
	vchannel              string
}

// spareReq is what the spare loop needs to make a vchannel's spare.
type spareReq struct {
	collection, partition, rowSize int64
}

// assignState is the assignment index and the spares. Guarded by
// Coordinator.mu, except kick.
type assignState struct {
	growing map[growKey][]*segment
	spares  map[string]*segment // vchannel → its unclaimed spare
	want    map[string]spareReq // vchannels whose spare the loop should make
	kick    chan struct{}       // coalescing trigger for the spare loop
}

func newAssignState() assignState {
	return assignState{
		growing: map[growKey][]*segment{}, spares: map[string]*segment{}, want: map[string]spareReq{},
		kick: make(chan struct{}, 1),
	}
}

// AssignSegment returns the growing segment that takes the rows, creating one
// when none has room. The caller holds the vchannel's pchannel lock
// (wal.Writer.AppendBuild) so assignment and append are ordered with seals.
// rowSize is the estimated bytes per row, used to size the segment.
func (c *Coordinator) AssignSegment(ctx context.Context, collectionID, partitionID int64, vchannel string, rows, rowSize int64) (int64, error) {
	rowSize = max(rowSize, 1)
	key := growKey{collectionID, partitionID, vchannel}
	c.mu.Lock()
	if id, ok := c.assignLocked(key, rows, rowSize); ok {
		c.mu.Unlock()
		return id, nil
	}
	c.mu.Unlock()

	id, err := c.ids.Allocate(ctx, 1)
	if err != nil {
		return 0, fmt.Errorf("datacoord: allocate segment id: %w", err)
	}
	now := c.now()
	info := catalog.SegmentInfo{
		ID: int64(id), CollectionID: collectionID, PartitionID: partitionID,
		VChannel: vchannel, State: catalog.SegmentGrowing, Level: catalog.LevelL1, MaxRows: c.maxRows(rowSize),
		CreatedAt: now.UnixMilli(), SyncedOffset: -1,
	}
	if err := c.persist(ctx, []catalog.SegmentInfo{info}); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &segment{info: info, rowSize: rowSize, assigned: rows, lastWrite: now}
	c.segments[info.ID] = s
	c.assign.growing[key] = append(c.assign.growing[key], s)
	c.wantSpareLocked(key, rowSize)
	return info.ID, nil
}

// maxRows is the row capacity of a new segment: maxSize × sealProportion / rowSize.
func (c *Coordinator) maxRows(rowSize int64) int64 {
	return max(int64(float64(c.cfg.SegmentMaxSize)*c.cfg.SealProportion)/rowSize, 1)
}

// assignable reports whether an indexed segment may still take rows.
func assignable(s *segment) bool {
	return s.info.State == catalog.SegmentGrowing && !s.sealing && !s.fenced && s.info.Level == catalog.LevelL1
}

// assignLocked assigns the rows to an indexed segment with room (the lowest
// ID wins) or to the vchannel's spare, without I/O. The caller holds mu.
func (c *Coordinator) assignLocked(key growKey, rows, rowSize int64) (int64, bool) {
	list := slices.DeleteFunc(c.assign.growing[key], func(s *segment) bool { return !assignable(s) })
	if len(list) == 0 {
		delete(c.assign.growing, key)
	} else {
		c.assign.growing[key] = list
	}
	var best *segment
	for _, s := range list {
		if s.assigned+rows > s.info.MaxRows && s.assigned > 0 {
			if rows <= s.info.MaxRows {
				s.full = true
			}
			continue
		}
		if best == nil || s.info.ID < best.info.ID {
			best = s
		}
	}
	now := c.now()
	if best == nil {
		best = c.assign.spares[key.vchannel]
		if best == nil {
			return 0, false
		}
		delete(c.assign.spares, key.vchannel)
		if !assignable(best) || !best.info.Spare || best.info.CollectionID != key.collection {
			return 0, false // dropped (a truncate, a partition drop) since it was made
		}
		// Claimed in memory; the next write of the record persists it.
		best.info.Spare = false
		best.claimUnsaved = true
		best.info.PartitionID = key.partition
		best.info.MaxRows = c.maxRows(rowSize)
		best.info.CreatedAt = now.UnixMilli()
		best.rowSize = rowSize
		c.assign.growing[key] = append(c.assign.growing[key], best)
		c.wantSpareLocked(key, rowSize)
	}
	best.assigned += rows
	best.lastWrite = now
	return best.info.ID, true
}

// wantSpareLocked asks the spare loop for a spare of key's vchannel, unless
// it has one. The caller holds mu.
func (c *Coordinator) wantSpareLocked(key growKey, rowSize int64) {
	if c.assign.spares[key.vchannel] != nil {
		return
	}
	c.assign.want[key.vchannel] = spareReq{collection: key.collection, partition: key.partition, rowSize: rowSize}
	select {
	case c.assign.kick <- struct{}{}:
	default:
	}
}

// keepSpares makes the spares assignment asks for, until ctx ends.
func (c *Coordinator) keepSpares(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.assign.kick:
		}
		if err := c.makeSpares(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("making spare segments failed; assignment persists new segments itself meanwhile", "err", err)
		}
	}
}

// makeSpares persists a spare for every vchannel that wants one. A failed
// one is wanted again (the next kick retries it).
func (c *Coordinator) makeSpares(ctx context.Context) error {
	c.mu.Lock()
	want := c.assign.want
	c.assign.want = map[string]spareReq{}
	c.mu.Unlock()
	vs := make([]string, 0, len(want))
	for v := range want {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	for i, v := range vs {
		if err := c.makeSpare(ctx, v, want[v]); err != nil {
			c.mu.Lock()
			for _, v := range vs[i:] {
				if _, again := c.assign.want[v]; !again {
					c.assign.want[v] = want[v]
				}
			}
			c.mu.Unlock()
			return err
		}
	}
	return nil
}

func (c *Coordinator) makeSpare(ctx context.Context, vchannel string, req spareReq) error {
	id, err := c.ids.Allocate(ctx, 1)
	if err != nil {
		return fmt.Errorf("datacoord: allocate segment id: %w", err)
	}
	// Under metaMu, a collection dropped meanwhile is seen: the root
	// coordinator forgets its vchannels before DropCollection runs here,
	// which waits for metaMu and then drops the spare with the rest.
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	if c.chans != nil && !slices.Contains(c.chans.LiveVChannels(), vchannel) {
		return nil
	}
	c.mu.Lock()
	have := c.assign.spares[vchannel] != nil
	c.mu.Unlock()
	if have {
		return nil
	}
	now := c.now()
	info := catalog.SegmentInfo{
		ID: int64(id), CollectionID: req.collection, PartitionID: req.partition,
		VChannel: vchannel, State: catalog.SegmentGrowing, Level: catalog.LevelL1, MaxRows: c.maxRows(req.rowSize),
		CreatedAt: now.UnixMilli(), SyncedOffset: -1, Spare: true,
	}
	if err := c.persist(ctx, []catalog.SegmentInfo{info}); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &segment{info: info, rowSize: req.rowSize, lastWrite: now}
	c.segments[info.ID] = s
	c.assign.spares[vchannel] = s
	return nil
}

// unclaimedSpare reports whether s is a spare no row was assigned to in this
// process: it has no rows anywhere, and only assignment may look at it. (A
// Spare record loaded at start-up is fenced: it may have rows in the WAL.)
// The caller holds mu.
func unclaimedSpare(s *segment) bool { return s.info.Spare && !s.fenced }
