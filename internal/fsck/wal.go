package fsck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/metastore"
	"github.com/strata-db/strata/internal/metastore/embedded"
	"github.com/strata-db/strata/internal/wal"
	"github.com/strata-db/strata/internal/wal/local"
)

// vchanRef is one vchannel of a live collection, as the meta store knows it.
type vchanRef struct {
	collection   string
	collectionID int64
	vchannel     string
	// checkpoint is the vchannel's checkpoint offset: records below it are
	// in object storage. -1 when it has none.
	checkpoint int64
}

// walRefs is what the meta store references of one pchannel.
type walRefs struct {
	pchannel string
	// vchans are the vchannels of live collections on the pchannel, in
	// collection-ID order.
	vchans []vchanRef
	// need is the lowest end the pchannel may have so that no record
	// appended at the end is taken as already persisted by a consumer:
	// every checkpoint and collection start offset, and one past every
	// synced, delta-synced and segment start offset. needWhat says which
	// record sets it.
	need     int64
	needWhat string
	// maxRef is the largest offset referenced (-1: none), maxRefWhat which
	// record holds it.
	maxRef     int64
	maxRefWhat string
	// maxTS is the largest timestamp referenced for the pchannel's vchannels.
	maxTS uint64
	// sealed lists, per vchannel, the L1 segments in state Sealed: their
	// Flush message is in the WAL (or was, before a cut).
	sealed map[string][]int64
}

// ref notes an offset off that a record (what) references, and the end
// need it requires of the pchannel.
func (r *walRefs) ref(off, need int64, what string) {
	if need > r.need {
		r.need, r.needWhat = need, what
	}
	if off > r.maxRef {
		r.maxRef, r.maxRefWhat = off, what
	}
}

// loadWALRefs reads, per pchannel, every WAL offset and timestamp the meta
// store references: collections' start offsets, channel checkpoints and
// segment positions (all collections, dropped ones included: their offsets
// are in the pchannel's history too). Records that do not decode are
// skipped (the catalog checker reports them).
func loadWALRefs(ctx context.Context, kv metastore.KV) (map[string]*walRefs, error) {
	out := map[string]*walRefs{}
	refs := func(vchannel string) *walRefs {
		p := wal.PChannelOf(vchannel)
		r := out[p]
		if r == nil {
			r = &walRefs{pchannel: p, need: 0, maxRef: -1, sealed: map[string][]int64{}}
			out[p] = r
		}
		return r
	}
	scan := func(prefix string) ([]metastore.KeyValue, error) {
		kvs, err := kv.Scan(ctx, prefix)
		if err != nil {
			return nil, fmt.Errorf("read meta store (%s): %w", prefix, err)
		}
		return kvs, nil
	}
	kvs, err := scan(catalog.CollectionPrefix)
	if err != nil {
		return nil, err
	}
	type live struct {
		info catalog.CollectionInfo
		i    int
	}
	var lives []live
	for _, e := range kvs {
		var c catalog.CollectionInfo
		if catalog.Unmarshal(e.Value, &c) != nil {
			continue
		}
		for i, v := range c.VChannels {
			r := refs(v)
			r.maxTS = max(r.maxTS, c.CreatedTS)
			if i < len(c.StartOffsets) {
				r.ref(c.StartOffsets[i], c.StartOffsets[i], fmt.Sprintf("the start offset of vchannel %s", v))
			}
			if c.State != catalog.CollectionDropped {
				lives = append(lives, live{c, i})
			}
		}
	}
	cps := map[string]catalog.ChannelCheckpoint{}
	if kvs, err = scan(catalog.CheckpointPrefix); err != nil {
		return nil, err
	}
	for _, e := range kvs {
		var cp catalog.ChannelCheckpoint
		if catalog.Unmarshal(e.Value, &cp) != nil || cp.VChannel == "" {
			continue
		}
		cps[cp.VChannel] = cp
		r := refs(cp.VChannel)
		r.maxTS = max(r.maxTS, cp.Position.TimeTick)
		r.ref(cp.Position.Offset, cp.Position.Offset, fmt.Sprintf("the checkpoint of vchannel %s", cp.VChannel))
		r.ref(cp.DeltaSyncedOffset, cp.DeltaSyncedOffset+1, fmt.Sprintf("the delta-synced offset of vchannel %s", cp.VChannel))
	}
	if kvs, err = scan(catalog.SegmentPrefix); err != nil {
		return nil, err
	}
	for _, e := range kvs {
		var s catalog.SegmentInfo
		if catalog.Unmarshal(e.Value, &s) != nil || s.VChannel == "" {
			continue
		}
		r := refs(s.VChannel)
		r.maxTS = max(r.maxTS, s.FlushTS)
		if s.State == catalog.SegmentSealed && s.Level != catalog.LevelL0 {
			r.sealed[s.VChannel] = append(r.sealed[s.VChannel], s.ID)
		}
		if p := s.StartPosition; p != nil {
			r.maxTS = max(r.maxTS, p.TimeTick)
			r.ref(p.Offset, p.Offset+1, fmt.Sprintf("the start position of segment %d", s.ID))
		}
		r.ref(s.SyncedOffset, s.SyncedOffset+1, fmt.Sprintf("the synced offset of segment %d", s.ID))
		for _, logs := range s.Binlogs {
			for _, l := range logs {
				r.maxTS = max(r.maxTS, l.TsTo)
			}
		}
		for _, l := range s.Deltalogs {
			r.maxTS = max(r.maxTS, l.TsTo)
		}
	}
	sort.Slice(lives, func(i, j int) bool {
		if lives[i].info.ID != lives[j].info.ID {
			return lives[i].info.ID < lives[j].info.ID
		}
		return lives[i].i < lives[j].i
	})
	for _, l := range lives {
		v := l.info.VChannels[l.i]
		ref := vchanRef{collection: l.info.Name, collectionID: l.info.ID, vchannel: v, checkpoint: -1}
		if cp, ok := cps[v]; ok {
			ref.checkpoint = cp.Position.Offset
		}
		r := refs(v)
		r.vchans = append(r.vchans, ref)
	}
	return out, nil
}

// WALChecker verifies every record of the local WAL ({data-dir}/wal) and
// that no pchannel ends before an offset the meta store references (see
// the package documentation). maxRecordBytes is the WAL's
// Config.MaxRecordBytes (≤ 0: the default).
func WALChecker(maxRecordBytes int64) Checker {
	return Checker{Name: "wal", Check: func(ctx context.Context, dir string) (Result, error) {
		return checkWAL(ctx, dir, maxRecordBytes)
	}}
}

func checkWAL(ctx context.Context, dir string, maxRecordBytes int64) (Result, error) {
	var res Result
	refs := map[string]*walRefs{}
	kv, err := embedded.OpenReadOnly(filepath.Join(dir, MetaFile), nil)
	switch {
	case errors.Is(err, embedded.ErrLocked):
		return res, err // the server is running: its WAL is being written
	case err != nil:
		res.Notes = append(res.Notes, fmt.Sprintf("wal: the meta store cannot be read (%v): what WAL damage affects is not known", err))
	default:
		refs, err = loadWALRefs(ctx, kv)
		_ = kv.Close()
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("wal: %v: what WAL damage affects is not known", err))
			refs = map[string]*walRefs{}
		}
	}
	walDir := filepath.Join(dir, WALDir)
	var found []local.Damage
	if _, err := os.Stat(walDir); err == nil {
		if found, err = local.Verify(walDir, maxRecordBytes); err != nil {
			return res, err
		}
		res.Stats.Files, res.Stats.Bytes = countWALFiles(walDir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	damaged := map[string]bool{}
	for _, d := range found {
		switch d.Kind {
		case local.DamageTornTail:
			res.Notes = append(res.Notes, fmt.Sprintf("wal: pchannel %s: torn tail at %s byte %d (record offset %d): "+
				"the unfinished last write of a crash, never acknowledged; the server truncates it when it starts (%s)",
				d.PChannel, d.Path, d.ByteOffset, d.RecordOffset, d.Detail))
		case local.DamageOverlap:
			res.Notes = append(res.Notes, fmt.Sprintf("wal: pchannel %s: %s: %s (readers ignore the extra records)",
				d.PChannel, d.Path, d.Detail))
		default:
			damaged[d.PChannel] = true
			res.Damage = append(res.Damage, walDamage(refs[d.PChannel], d))
		}
	}
	names := make([]string, 0, len(refs))
	for p := range refs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		r := refs[p]
		if damaged[p] || r.need == 0 {
			continue
		}
		end, err := local.End(walDir, p, maxRecordBytes)
		if err != nil {
			return res, err
		}
		if end >= r.need {
			continue
		}
		d := Damage{
			Kind: KindWAL, PChannel: p, File: filepath.Join(walDir, p),
			Problem: fmt.Sprintf("the pchannel ends at offset %d, before offset %d that %s requires", end, r.need, r.needWhat),
			Affects: fmt.Sprintf("records appended from now on get offsets that consumers already passed and are skipped as "+
				"persisted (acknowledged writes silently lost) in %s; `strata repair --cut-wal %s` pads the WAL past them",
				collectionsOf(r), p),
		}
		setCollection(&d, r)
		res.Damage = append(res.Damage, d)
	}
	return res, nil
}

// countWALFiles counts the segment files under walDir and their bytes.
func countWALFiles(walDir string) (int, int64) {
	var n int
	var bytes int64
	_ = filepath.WalkDir(walDir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(d.Name()) != ".wal" {
			return nil //nolint:nilerr // best effort: Verify reports unreadable files
		}
		if fi, err := d.Info(); err == nil {
			n++
			bytes += fi.Size()
		}
		return nil
	})
	return n, bytes
}

// walDamage turns one WAL damage into a report line that says what it
// affects: the collections with vchannels on the pchannel, and for each
// whether the damaged records are before its checkpoint (in binlogs) or
// after it (not flushed yet).
func walDamage(r *walRefs, d local.Damage) Damage {
	out := Damage{
		Kind: KindWAL, PChannel: d.PChannel, File: d.Path,
		Problem: fmt.Sprintf("%s at byte %d (record offset %d): %s", d.Kind, d.ByteOffset, d.RecordOffset, d.Detail),
	}
	at := d.RecordOffset
	parts := []string{fmt.Sprintf("readers of pchannel %s stop at offset %d, and appends to it may be refused; "+
		"`strata repair --cut-wal %s` cuts it there, accepting the loss of every later record", d.PChannel, at, d.PChannel)}
	if r == nil || len(r.vchans) == 0 {
		parts = append(parts, "no live collection has a vchannel on the pchannel")
	} else {
		setCollection(&out, r)
		for _, v := range r.vchans {
			switch {
			case v.checkpoint < 0:
				parts = append(parts, fmt.Sprintf("collection %q (vchannel %s): no checkpoint, nothing flushed: "+
					"its records from offset %d on are lost with a cut", v.collection, v.vchannel, at))
			case at < v.checkpoint:
				parts = append(parts, fmt.Sprintf("collection %q (vchannel %s): before its checkpoint %d: the damaged "+
					"records are already in binlogs (nothing lost from storage); a cut loses its unflushed records from offset %d on",
					v.collection, v.vchannel, v.checkpoint, v.checkpoint))
			default:
				parts = append(parts, fmt.Sprintf("collection %q (vchannel %s): after its checkpoint %d: its rows and "+
					"deletes from offset %d on are not flushed yet and are lost with a cut", v.collection, v.vchannel, v.checkpoint, at))
			}
		}
	}
	out.Affects = strings.Join(parts, "; ")
	return out
}

// setCollection names the collection in d when exactly one collection has
// vchannels on the pchannel.
func setCollection(d *Damage, r *walRefs) {
	ids := map[int64]string{}
	for _, v := range r.vchans {
		ids[v.collectionID] = v.collection
	}
	if len(ids) == 1 {
		for id, name := range ids {
			d.CollectionID, d.Collection = id, name
		}
	}
}

// collectionsOf names the live collections with vchannels on r's pchannel.
func collectionsOf(r *walRefs) string {
	var names []string
	seen := map[int64]bool{}
	for _, v := range r.vchans {
		if !seen[v.collectionID] {
			seen[v.collectionID] = true
			names = append(names, fmt.Sprintf("%q", v.collection))
		}
	}
	if len(names) == 0 {
		return "no live collection"
	}
	return "collections " + strings.Join(names, ", ")
}
