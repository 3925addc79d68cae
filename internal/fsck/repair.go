package fsck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
)

// ErrNoSegment is returned by DropSegment for a segment the meta store has
// no live record of.
var ErrNoSegment = errors.New("fsck: no such segment")

// Loss describes what DropSegment gave up.
type Loss struct {
	Collection   string
	CollectionID int64
	PartitionID  int64
	SegmentID    int64
	VChannel     string
	Level        catalog.SegmentLevel
	// State is the segment's state before the drop.
	State catalog.SegmentState
	// Rows is the segment's row count (for an L0 segment, its deletes).
	Rows int64
	// Deletes is the number of deletes in the segment's delta logs.
	Deletes int64
}

// String describes the loss for the operator's log.
func (l Loss) String() string {
	what := fmt.Sprintf("%d rows", l.Rows)
	if l.Level == catalog.LevelL0 {
		what = fmt.Sprintf("%d deletes (the rows they deleted become visible again)", l.Deletes)
	} else if l.Deletes > 0 {
		what += fmt.Sprintf(" and %d deletes", l.Deletes)
	}
	return fmt.Sprintf("dropped segment %d (%s, level L%d) of collection %q (%d), partition %d, vchannel %s: %s lost",
		l.SegmentID, l.State, l.Level, l.Collection, l.CollectionID, l.PartitionID, l.VChannel, what)
}

// openForRepair opens the meta store read-write with the store's short lock
// timeout, turning the lock timeout into embedded.ErrLocked.
func openForRepair(dir string) (*embedded.Store, error) {
	kv, err := embedded.Open(filepath.Join(dir, MetaFile), nil)
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", embedded.ErrLocked, filepath.Join(dir, MetaFile))
	}
	return kv, err
}

// DropSegment marks segment id Dropped in the meta store of the data
// directory dir, as the data coordinator does when it drops a segment
// (state Dropped, DroppedAt now, in one transaction guarded on the record
// being unchanged), and returns what is lost. The coordinator's garbage
// collection later removes the segment's files and index files. It fails
// with embedded.ErrLocked while a server holds the data directory, and with
// ErrNoSegment for an unknown or already dropped segment.
func DropSegment(ctx context.Context, dir string, id int64, now time.Time) (Loss, error) {
	if _, err := statMeta(dir); err != nil {
		return Loss{}, err
	}
	kv, err := openForRepair(dir)
	if err != nil {
		return Loss{}, err
	}
	defer func() { _ = kv.Close() }()
	kvs, err := kv.Scan(ctx, catalog.SegmentPrefix)
	if err != nil {
		return Loss{}, fmt.Errorf("fsck: read segments: %w", err)
	}
	for _, e := range kvs {
		var s catalog.SegmentInfo
		if err := catalog.Unmarshal(e.Value, &s); err != nil || s.ID != id {
			continue
		}
		if s.State == catalog.SegmentDropped {
			return Loss{}, fmt.Errorf("%w: segment %d is already dropped", ErrNoSegment, id)
		}
		loss := Loss{
			CollectionID: s.CollectionID, PartitionID: s.PartitionID, SegmentID: s.ID, VChannel: s.VChannel,
			Level: s.Level, State: s.State, Rows: s.NumRows,
		}
		for _, l := range s.Deltalogs {
			loss.Deletes += l.Entries
		}
		if b, err := kv.Get(ctx, catalog.CollectionKey(s.CollectionID)); err == nil {
			if coll, err := catalog.DecodeCollection(b); err == nil {
				loss.Collection = coll.Name
			}
		}
		s.State, s.DroppedAt = catalog.SegmentDropped, now.UnixMilli()
		b, err := catalog.Marshal(&s)
		if err != nil {
			return Loss{}, err
		}
		if err := kv.Txn(ctx, metastore.IfEquals(e.Key, e.Value), metastore.Put(e.Key, b)); err != nil {
			return Loss{}, fmt.Errorf("fsck: drop segment %d: %w", id, err)
		}
		return loss, nil
	}
	return Loss{}, fmt.Errorf("%w: %d", ErrNoSegment, id)
}

// statMeta checks that dir holds a meta store, so that a repair never
// creates an empty one.
func statMeta(dir string) (os.FileInfo, error) {
	fi, err := os.Stat(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("fsck: %s is not a data directory: %w", dir, err)
	}
	return fi, nil
}
