package placement

import (
	"context"

	"github.com/strata-db/strata/internal/catalog"
)

// Recoveries tells where the consumption of a vchannel resumes: its
// channel checkpoint and the segments that are not flushed yet (the data
// coordinator's Recovery). An error means it could not say.
type Recoveries interface {
	Recovery(ctx context.Context, vchannel string) (catalog.RecoveryInfo, error)
}

// Handoff is a Move with what the channel's new owner needs to resume it:
// the channel checkpoint (every message before Checkpoint.Position.Offset
// is in object storage, deletes through DeltaSyncedOffset are in delta
// logs) and the offset to start reading at so that the unflushed
// segments' rows are replayed. The new owner skips the inserts of a
// segment at or below that segment's SyncedOffset and the deletes at or
// below DeltaSyncedOffset, so rows the old owner synced are not written
// twice, and nothing after the checkpoint is lost: the checkpoint only
// ever advances with (or after) the files of every row before it.
type Handoff struct {
	Move
	// Epoch is the new ownership's assignment epoch (Assignment.Epoch):
	// the new owner watches the channel under it, and the data coordinator
	// must be fenced to it before (ChannelApplier does both).
	Epoch int64
	// FromAddress is the internal RPC address of the previous owner while
	// it is live ("" when it is dead or there was none); ToAddress is the
	// new owner's. ChannelBalancer fills them from membership.
	FromAddress, ToAddress string
	// Checkpoint is the channel's checkpoint when the move was decided
	// (DeltaSyncedOffset -1 and a zero position: none yet).
	Checkpoint catalog.ChannelCheckpoint
	// SeekOffset is where the new owner starts reading the channel.
	SeekOffset int64
	// Segments are the channel's live segments, as Recovery lists them.
	Segments []catalog.SegmentInfo
}

// Handoffs returns the handoff of every move, read from rec when they are
// decided. A new owner must not start before the old one stopped
// (the old owner is dead, or was told to release the channel and did):
// the checkpoint it starts from would otherwise fall behind what the old
// owner still writes. It fails when rec cannot say for one of them.
func Handoffs(ctx context.Context, moves []Move, rec Recoveries) ([]Handoff, error) {
	out := make([]Handoff, 0, len(moves))
	for _, m := range moves {
		ri, err := rec.Recovery(ctx, m.Channel)
		if err != nil {
			return nil, err
		}
		out = append(out, Handoff{Move: m, Checkpoint: ri.Checkpoint, SeekOffset: ri.SeekOffset, Segments: ri.Segments})
	}
	return out, nil
}
