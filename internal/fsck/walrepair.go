package fsck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// WALCut is what CutWAL did to one pchannel.
type WALCut struct {
	// PChannel is the pchannel repaired.
	PChannel string
	// Cut is what was cut away (Cut.Damage is nil when nothing was damaged).
	Cut local.CutResult
	// Target is the end the pchannel had to reach after the cut, and Why
	// says what set it; Pad is what was appended to reach it.
	Target int64
	Why    string
	Pad    local.PadResult
	// Affected says, per collection with a vchannel on the pchannel, what
	// the cut removed.
	Affected []string
	// Resealed lists, per vchannel, the Sealed segments whose seal was
	// announced again (a Flush message appended after the fillers at
	// offset FlushOffset), since the cut may have removed their Flush
	// message, without which they would stay Sealed forever.
	Resealed    map[string][]int64
	FlushOffset int64
}

// Lines describes the repair for the operator, one line each.
func (c WALCut) Lines() []string {
	var out []string
	if d := c.Cut.Damage; d != nil {
		out = append(out, fmt.Sprintf("cut pchannel %s at %s byte %d (record offset %d, %s: %s)",
			c.PChannel, d.Path, d.ByteOffset, d.RecordOffset, d.Kind, d.Detail))
		if c.Cut.OldEnd > c.Cut.End {
			out = append(out, fmt.Sprintf("removed %d bytes holding at least %d intact records (offsets %d to at least %d); kept in: %v",
				c.Cut.RemovedBytes, c.Cut.RemovedRecords, c.Cut.End, c.Cut.OldEnd-1, c.Cut.Moved))
		} else {
			out = append(out, fmt.Sprintf("removed %d bytes holding no whole record (a torn tail is never acknowledged); kept in: %v",
				c.Cut.RemovedBytes, c.Cut.Moved))
		}
	} else {
		out = append(out, fmt.Sprintf("pchannel %s has no damage: nothing cut", c.PChannel))
	}
	for _, v := range sortedVChannels(c.Resealed) {
		out = append(out, fmt.Sprintf("appended a Flush message at offset %d for the Sealed segments %v of vchannel %s "+
			"(the cut may have removed theirs): the data node flushes them", c.FlushOffset, c.Resealed[v], v))
	}
	switch {
	case c.Pad.PChannel == "": // the padding did not run
	case c.Pad.Fillers > 0:
		out = append(out, fmt.Sprintf("wrote %d filler time ticks (timestamp %d) at offsets %d to %d, so that the next record "+
			"gets offset %d, past %s: no consumer skips it as already persisted",
			c.Pad.Fillers, c.Pad.TimeTick, c.Pad.From, c.Pad.End-1, c.Pad.End, c.Why))
	default:
		out = append(out, fmt.Sprintf("no fillers needed: the pchannel ends at %d, past %s", c.Pad.End, c.Why))
	}
	for _, a := range c.Affected {
		out = append(out, "affected: "+a)
	}
	return out
}

// CutWAL is `strata repair --cut-wal`: the explicit, logged way to accept
// the loss of a damaged WAL tail. Holding the meta store's write lock (so
// it fails with embedded.ErrLocked while a server runs), it reads every
// offset and timestamp the meta store references for the pchannel's
// vchannels, cuts the pchannel at its first damage (local.Cut: the removed
// bytes are kept in .damaged files) and pads it with filler time ticks
// (local.Pad) until its end is past the largest referenced offset and at
// least the end before the cut, so that no record appended later reuses
// an offset a consumer has already passed. The fillers carry the largest
// of the timestamps referenced and that of the last kept record. Run on a
// clean pchannel it cuts nothing and only pads (finishing an interrupted
// repair). See the package documentation.
func CutWAL(ctx context.Context, dir, pchannel string, maxRecordBytes int64, logger *slog.Logger) (WALCut, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	out := WALCut{PChannel: pchannel}
	if _, err := statMeta(dir); err != nil {
		return out, err
	}
	walDir := filepath.Join(dir, WALDir)
	if _, err := os.Stat(filepath.Join(walDir, pchannel)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, fmt.Errorf("fsck: no WAL for pchannel %q in %s", pchannel, walDir)
		}
		return out, fmt.Errorf("fsck: %w", err)
	}
	kv, err := openForRepair(dir)
	if err != nil {
		return out, err
	}
	defer func() { _ = kv.Close() }()
	all, err := loadWALRefs(ctx, kv)
	if err != nil {
		return out, fmt.Errorf("fsck: %w", err)
	}
	refs := all[pchannel]
	if refs == nil {
		refs = &walRefs{pchannel: pchannel, maxRef: -1}
	}
	if out.Cut, err = local.Cut(walDir, pchannel, maxRecordBytes, logger); err != nil {
		return out, err
	}
	out.Target, out.Why = refs.maxRef+1, "every offset the meta store references"
	if refs.maxRef >= 0 {
		out.Why = fmt.Sprintf("offset %d, the largest the meta store references (%s)", refs.maxRef, refs.maxRefWhat)
	}
	if out.Cut.OldEnd > out.Target {
		out.Target, out.Why = out.Cut.OldEnd, fmt.Sprintf("the end before the cut (at least %d)", out.Cut.OldEnd)
	}
	if d := out.Cut.Damage; d != nil {
		out.Affected = cutAffects(refs, d.RecordOffset, max(out.Cut.OldEnd, d.RecordOffset))
	}
	if out.Pad, err = local.Pad(walDir, pchannel, out.Target, refs.maxTS, maxRecordBytes, logger); err != nil {
		return out, err
	}
	if (out.Cut.Damage != nil || out.Pad.Fillers > 0) && len(refs.sealed) > 0 {
		var msgs []wal.Message
		for _, v := range sortedVChannels(refs.sealed) {
			msgs = append(msgs, wal.Message{
				Type: wal.TypeFlush, VChannel: v, TimeTick: out.Pad.TimeTick,
				Payload: wal.EncodeFlush(refs.sealed[v]),
			})
		}
		if out.FlushOffset, err = local.Append(walDir, pchannel, [][]byte{wal.EncodeRecord(msgs)}, maxRecordBytes, logger); err != nil {
			return out, err
		}
		out.Resealed = refs.sealed
	}
	attrs := []any{
		slog.String("pchannel", pchannel), slog.Int64("end", out.Pad.End), slog.Int64("fillers", out.Pad.Fillers),
		slog.String("why", out.Why),
	}
	for _, a := range out.Affected {
		attrs = append(attrs, slog.String("affected", a))
	}
	logger.Warn("repair: cut the WAL of a pchannel (operator request)", attrs...)
	return out, nil
}

// cutAffects says, per vchannel on the pchannel, what a cut of the records
// [at, oldEnd) removed.
func cutAffects(r *walRefs, at, oldEnd int64) []string {
	if len(r.vchans) == 0 {
		return []string{"no live collection has a vchannel on the pchannel"}
	}
	var out []string
	for _, v := range r.vchans {
		who := fmt.Sprintf("collection %q (vchannel %s)", v.collection, v.vchannel)
		switch {
		case v.checkpoint < 0:
			out = append(out, fmt.Sprintf("%s: had no checkpoint: its records from offset %d on are lost", who, at))
		case v.checkpoint >= oldEnd:
			out = append(out, fmt.Sprintf("%s: its checkpoint %d is past every removed record: they are all in binlogs, nothing lost",
				who, v.checkpoint))
		case at < v.checkpoint:
			out = append(out, fmt.Sprintf("%s: removed records before its checkpoint %d are in binlogs; its records from offset %d on "+
				"were not flushed and are lost", who, v.checkpoint, v.checkpoint))
		default:
			out = append(out, fmt.Sprintf("%s: its checkpoint %d is before the damage: its rows and deletes from offset %d on "+
				"were not flushed and are lost", who, v.checkpoint, at))
		}
	}
	return out
}

// sortedVChannels returns the keys of m in order.
func sortedVChannels(m map[string][]int64) []string {
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}
