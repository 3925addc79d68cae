package local

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/strata-db/strata/internal/wal"
)

// Kinds of Damage.
const (
	// DamageTornTail is the unfinished last group commit of a pchannel: Open
	// truncates it, and nothing acknowledged is lost.
	DamageTornTail = "torn tail"
	// DamageCorruptRecord is a record whose length or checksum is wrong and
	// that is not a torn tail: Open keeps it and refuses appends (last
	// segment) or readers stop at it (sealed segment).
	DamageCorruptRecord = "corrupt record"
	// DamageMissingSegment is a gap between two sealed segments: a segment
	// file (or the end of one) is missing.
	DamageMissingSegment = "missing segment"
	// DamageOverlap is a sealed segment holding more records than the name
	// of the next segment implies (readers ignore the extra records).
	DamageOverlap = "overlapping segment"
	// DamageUnreadable is a segment file or pchannel directory that could
	// not be read at all (an I/O or permission error).
	DamageUnreadable = "unreadable"
)

// Damage is one damaged place in a WAL directory, found by Verify.
type Damage struct {
	// PChannel is the pchannel (directory name).
	PChannel string
	// Path is the segment file (or pchannel directory) affected.
	Path string
	// ByteOffset is the byte offset in Path where the damage starts.
	ByteOffset int64
	// RecordOffset is the pchannel offset of the first record affected.
	RecordOffset int64
	// Kind is one of the Damage* constants.
	Kind string
	// Detail says what is wrong, in words.
	Detail string
}

// String formats d for a report.
func (d Damage) String() string {
	return fmt.Sprintf("%s: %s at %s byte %d (record %d): %s", d.PChannel, d.Kind, d.Path, d.ByteOffset, d.RecordOffset, d.Detail)
}

// Verify checks the WAL in dir without changing anything (it opens files
// only for reading and never truncates): for every pchannel directory,
// every segment and every record it checks the frame length and CRC, that
// each sealed segment holds exactly the records up to the next segment's
// name (dense offsets, no missing segment), and classifies damage in the
// last segment as Open would (torn tail or corruption; with the default
// MaxBatchBytes as the group-commit bound). maxRecordBytes ≤ 0 means
// DefaultMaxRecordBytes. It returns every damage found, in pchannel and
// offset order (at most one per segment: the first bad record); the error
// is for a dir that cannot be listed.
func Verify(dir string, maxRecordBytes int64) ([]Damage, error) {
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.withDefaults()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: verify: %w", err)
	}
	var out []Damage
	for _, e := range entries {
		if !e.IsDir() || validPChannel(e.Name()) != nil {
			continue
		}
		out = append(out, verifyChannel(&cfg, e.Name())...)
	}
	return out, nil
}

// verifyChannel returns the damage in one pchannel directory.
func verifyChannel(cfg *Config, name string) []Damage {
	dir := filepath.Join(cfg.Dir, name)
	firsts, err := listSegments(dir)
	if err != nil {
		return []Damage{{PChannel: name, Path: dir, Kind: DamageUnreadable, Detail: err.Error()}}
	}
	var out []Damage
	for i, first := range firsts {
		path := filepath.Join(dir, segmentName(first))
		d := Damage{PChannel: name, Path: path}
		res, err := scanSegment(path, cfg.MaxRecordBytes)
		if err != nil {
			d.Kind, d.RecordOffset, d.Detail = DamageUnreadable, first, err.Error()
			out = append(out, d)
			continue
		}
		d.ByteOffset, d.RecordOffset = res.size, first+res.records
		last := i == len(firsts)-1
		switch {
		case res.err != nil && last:
			fi, err := os.Stat(path)
			if err != nil {
				d.Kind, d.Detail = DamageUnreadable, err.Error()
				break
			}
			why := classifyTail(path, res.size, fi.Size(), res.err, cfg)
			if why == nil {
				d.Kind = DamageTornTail
				d.Detail = fmt.Sprintf("%v; Open truncates the last %d bytes (never acknowledged)", res.err, fi.Size()-res.size)
			} else {
				d.Kind, d.Detail = DamageCorruptRecord, why.Error()
			}
		case res.err != nil:
			d.Kind = DamageCorruptRecord
			d.Detail = fmt.Sprintf("%v in a sealed segment", res.err)
			if first+res.records > firsts[i+1] {
				d.Detail += fmt.Sprintf(", past the %d records the next segment's name implies", firsts[i+1]-first)
			}
		case last:
			continue
		case first+res.records < firsts[i+1]:
			d.Kind = DamageMissingSegment
			d.Detail = fmt.Sprintf("records %d to %d are missing: the segment ends before the next one (%s) begins",
				first+res.records, firsts[i+1]-1, segmentName(firsts[i+1]))
		case first+res.records > firsts[i+1]:
			d.Kind = DamageOverlap
			d.Detail = fmt.Sprintf("the segment holds %d records but the next one begins at %d", res.records, firsts[i+1])
		default:
			continue
		}
		out = append(out, d)
	}
	return out
}

// CutResult is what Cut removed from a pchannel.
type CutResult struct {
	// PChannel is the pchannel cut.
	PChannel string
	// Damage is where the WAL was cut; nil when nothing was damaged (and
	// nothing was changed).
	Damage *Damage
	// End is the pchannel's end offset after the cut: the next append gets it.
	End int64
	// RemovedBytes is the number of bytes moved out of the WAL.
	RemovedBytes int64
	// RemovedRecords is the number of valid records among them (records
	// after the damage in the cut segment are counted where their frames
	// can still be found, so this is a lower bound).
	RemovedRecords int64
	// Moved lists the files the removed bytes now live in (<name>.damaged).
	Moved []string
	// OldEnd is a lower bound of the pchannel's end before the cut: End
	// plus the damaged record and the valid records found after it, or
	// the end of the last segment moved away, whichever is larger.
	OldEnd int64
}

// Cut is the operator's explicit way to accept a loss in pchannel's WAL
// under dir (never called automatically, and only while no Log has dir
// open): it finds the first damage Verify reports for the pchannel (a
// corrupt record, a torn tail or a missing segment; an overlap is left
// alone), copies the bytes of that segment from the damage on into
// <segment>.damaged and truncates the segment there (after its last good
// record), and renames every later segment file to <name>.damaged, so
// nothing is deleted. Every change is fsynced. It logs and returns what was
// removed; with no damage it changes nothing. maxRecordBytes must be the
// Config.MaxRecordBytes the WAL was written with (≤ 0 means
// DefaultMaxRecordBytes), or larger records would be taken for damage.
func Cut(dir, pchannel string, maxRecordBytes int64, logger *slog.Logger) (CutResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := validPChannel(pchannel); err != nil {
		return CutResult{}, err
	}
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.withDefaults()
	res := CutResult{PChannel: pchannel}
	var damage *Damage
	for _, d := range verifyChannel(&cfg, pchannel) {
		if d.Kind == DamageUnreadable {
			return res, fmt.Errorf("wal: cut %s: %s: %s", pchannel, d.Path, d.Detail)
		}
		if d.Kind != DamageOverlap {
			damage = &d
			break
		}
	}
	if damage == nil {
		return res, nil
	}
	res.Damage = damage
	res.End = damage.RecordOffset
	res.OldEnd = res.End
	chDir := filepath.Join(dir, pchannel)
	firsts, err := listSegments(chDir)
	if err != nil {
		return res, err
	}
	i := 0
	for i < len(firsts) && filepath.Join(chDir, segmentName(firsts[i])) != damage.Path {
		i++
	}
	if damage.Kind != DamageMissingSegment {
		moved, recs, n, err := cutSegment(damage.Path, damage.ByteOffset, cfg.MaxRecordBytes)
		if err != nil {
			return res, err
		}
		if moved != "" {
			res.Moved = append(res.Moved, moved)
		}
		res.RemovedRecords += recs
		res.RemovedBytes += n
		res.OldEnd = res.End + recs
		if damage.Kind == DamageCorruptRecord {
			res.OldEnd++ // the damaged record itself
		}
	}
	for _, first := range firsts[i+1:] {
		path := filepath.Join(chDir, segmentName(first))
		fi, err := os.Stat(path)
		if err != nil {
			return res, fmt.Errorf("wal: cut: %w", err)
		}
		if sr, err := scanSegment(path, cfg.MaxRecordBytes); err == nil {
			res.RemovedRecords += sr.records
			res.OldEnd = max(res.OldEnd, first+sr.records)
		} else {
			res.OldEnd = max(res.OldEnd, first)
		}
		to, err := freeName(path + ".damaged")
		if err != nil {
			return res, err
		}
		if err := os.Rename(path, to); err != nil {
			return res, fmt.Errorf("wal: cut: %w", err)
		}
		res.Moved = append(res.Moved, to)
		res.RemovedBytes += fi.Size()
	}
	if err := syncDirFile(chDir, (*os.File).Sync); err != nil {
		return res, err
	}
	logger.Warn("wal: cut pchannel at its first damage (operator request)",
		slog.Int64("end", res.End), slog.Int64("old_end_at_least", res.OldEnd),
		slog.String("pchannel", pchannel), slog.String("segment", damage.Path),
		slog.Int64("byte_offset", damage.ByteOffset), slog.Int64("record_offset", damage.RecordOffset),
		slog.String("kind", damage.Kind), slog.String("detail", damage.Detail),
		slog.Int64("removed_records", res.RemovedRecords), slog.Int64("removed_bytes", res.RemovedBytes),
		slog.Any("moved_to", res.Moved))
	return res, nil
}

// cutSegment copies the bytes of path from at on into a new .damaged file,
// truncates path at at and fsyncs both. It returns the new file ("" when
// nothing followed at), the valid records found in the moved bytes and
// their size.
func cutSegment(path string, at, maxBytes int64) (string, int64, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return "", 0, 0, fmt.Errorf("wal: cut: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, 0, fmt.Errorf("wal: cut: %w", err)
	}
	n := fi.Size() - at
	if n <= 0 {
		return "", 0, 0, nil
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, at); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, 0, fmt.Errorf("wal: cut: read %s: %w", path, err)
	}
	to, err := freeName(path + ".damaged")
	if err != nil {
		return "", 0, 0, err
	}
	if err := writeSynced(to, b); err != nil {
		return "", 0, 0, err
	}
	if err := f.Truncate(at); err != nil {
		return "", 0, 0, fmt.Errorf("wal: cut: truncate %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", 0, 0, fmt.Errorf("wal: cut: sync %s: %w", path, err)
	}
	return to, countFrames(b, maxBytes), n, nil
}

// countFrames counts the valid frames found in b (skipping bytes that do
// not start one), within resyncBudget CRC-checked bytes.
func countFrames(b []byte, maxBytes int64) int64 {
	var n, budget int64 = 0, resyncBudget
	for q := int64(0); q+headerSize < int64(len(b)) && budget > 0; {
		l := int64(binary.LittleEndian.Uint32(b[q:]))
		if l > 0 && l <= maxBytes && q+headerSize+l <= int64(len(b)) {
			budget -= l
			if crc32.Checksum(b[q+headerSize:q+headerSize+l], castagnoli) == binary.LittleEndian.Uint32(b[q+4:]) {
				n++
				q += headerSize + l
				continue
			}
		}
		q++
	}
	return n
}

// freeName returns path, or path.1, path.2, … : the first that does not exist.
func freeName(path string) (string, error) {
	for i := 0; ; i++ {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s.%d", path, i)
		}
		_, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("wal: cut: %w", err)
		}
	}
}

// writeSynced creates path (which must not exist) holding b, fsynced.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("wal: cut: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: cut: write %s: %w", path, err)
	}
	return nil
}

// End returns the end offset of pchannel's WAL under dir as Open would find
// it (the offset the next append gets), reading only: the last segment's
// first offset plus its valid records (a torn tail or damage ends it). A
// pchannel without a directory or segment files ends at 0.
func End(dir, pchannel string, maxRecordBytes int64) (int64, error) {
	if err := validPChannel(pchannel); err != nil {
		return 0, err
	}
	firsts, err := listSegments(filepath.Join(dir, pchannel))
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(firsts) == 0) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	last := firsts[len(firsts)-1]
	res, err := scanSegment(filepath.Join(dir, pchannel, segmentName(last)), cmp.Or(max(maxRecordBytes, 0), DefaultMaxRecordBytes))
	if err != nil {
		return 0, err
	}
	return last + res.records, nil
}

// PadResult is what Pad appended to a pchannel.
type PadResult struct {
	// PChannel is the pchannel padded.
	PChannel string
	// From is the pchannel's end before Pad, End its end after it.
	From, End int64
	// Fillers is the number of filler records appended (End − From).
	Fillers int64
	// TimeTick is the timestamp the fillers carry.
	TimeTick uint64
	// Segments lists the segment files the fillers were written to.
	Segments []string
}

// Pad appends filler records to pchannel's WAL under dir until its end is
// at least end (never called automatically, and only while no Log has dir
// open): after Cut the end moves back, and offsets that consumers'
// checkpoints already passed would otherwise be given to new records,
// which consumers would then skip as already persisted. Each filler is a
// pchannel-wide time tick (wal.TypeTimeTick, VChannel "") carrying
// max(minTS, the largest timestamp of the pchannel's last record): a time
// tick changes no data, and with that timestamp it never moves any
// consumer's time backwards (see "Checking and cutting" in the package
// documentation). The fillers are written as frames in the last segment,
// starting new segments at DefaultSegmentSize, fsynced at least every
// DefaultMaxBatchBytes/2 bytes (so a crash leaves at most a torn tail,
// which Open truncates) and at the end; a second Pad continues where an
// interrupted one stopped. Pad refuses a pchannel that Verify finds
// damaged (other than an overlap): cut it first. maxRecordBytes is as for
// Cut. With the end already at or past end it changes nothing.
func Pad(dir, pchannel string, end int64, minTS uint64, maxRecordBytes int64, logger *slog.Logger) (PadResult, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := validPChannel(pchannel); err != nil {
		return PadResult{}, err
	}
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.withDefaults()
	res := PadResult{PChannel: pchannel}
	chDir := filepath.Join(dir, pchannel)
	if _, err := os.Stat(chDir); err != nil {
		return res, fmt.Errorf("wal: pad: %w", err)
	}
	for _, d := range verifyChannel(&cfg, pchannel) {
		if d.Kind != DamageOverlap {
			return res, fmt.Errorf("wal: pad %s: %w: %s (cut it first)", pchannel, ErrDamaged, d)
		}
	}
	firsts, err := listSegments(chDir)
	if err != nil {
		return res, err
	}
	last, lastTS, err := lastRecordTS(chDir, firsts, cfg.MaxRecordBytes)
	if err != nil {
		return res, err
	}
	res.From, res.End = last, last
	res.TimeTick = max(minTS, lastTS)
	if last >= end {
		return res, nil
	}
	filler := (&wal.Message{Type: wal.TypeTimeTick, TimeTick: res.TimeTick}).Encode()
	w, err := appendFrames(chDir, firsts, last, end-last, func(int64) []byte { return filler })
	res.End, res.Fillers, res.Segments = w.synced, w.synced-last, w.paths
	if err != nil {
		return res, err
	}
	logger.Warn("wal: padded pchannel with filler time ticks (operator request)",
		slog.String("pchannel", pchannel), slog.Int64("from", res.From), slog.Int64("end", res.End),
		slog.Int64("fillers", res.Fillers), slog.Uint64("timetick", res.TimeTick), slog.Any("segments", res.Segments))
	return res, nil
}

// Append appends records to pchannel's WAL under dir, fsynced, as Pad
// writes its fillers (only while no Log has dir open, and never to a
// damaged pchannel), and returns the offset of the first. It is the
// operator tools' way to add the messages a repair needs (such as Flush
// messages lost in a cut); records must be valid and at most
// maxRecordBytes long (≤ 0: DefaultMaxRecordBytes).
func Append(dir, pchannel string, records [][]byte, maxRecordBytes int64, logger *slog.Logger) (int64, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := validPChannel(pchannel); err != nil {
		return 0, err
	}
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.withDefaults()
	for _, r := range records {
		if len(r) == 0 || int64(len(r)) > cfg.MaxRecordBytes {
			return 0, fmt.Errorf("wal: append %s: record of %d bytes", pchannel, len(r))
		}
	}
	chDir := filepath.Join(dir, pchannel)
	if len(records) == 0 {
		return End(dir, pchannel, cfg.MaxRecordBytes)
	}
	for _, d := range verifyChannel(&cfg, pchannel) {
		if d.Kind != DamageOverlap {
			return 0, fmt.Errorf("wal: append %s: %w: %s (cut it first)", pchannel, ErrDamaged, d)
		}
	}
	firsts, err := listSegments(chDir)
	if err != nil {
		return 0, err
	}
	from, _, err := lastRecordTS(chDir, firsts, cfg.MaxRecordBytes)
	if err != nil {
		return 0, err
	}
	w, err := appendFrames(chDir, firsts, from, int64(len(records)), func(i int64) []byte { return records[i] })
	if err != nil {
		return from, err
	}
	logger.Warn("wal: appended records (operator request)", slog.String("pchannel", pchannel),
		slog.Int64("from", from), slog.Int64("records", w.synced-from))
	return from, nil
}

// appendFrames writes n frames (record i from rec(i)) at the end (from) of
// a clean pchannel whose segments are firsts, fsynced.
func appendFrames(chDir string, firsts []int64, from, n int64, rec func(i int64) []byte) (*padWriter, error) {
	w := &padWriter{dir: chDir, next: from, synced: from, segSize: DefaultSegmentSize, syncEvery: DefaultMaxBatchBytes / 2}
	var err error
	if len(firsts) == 0 {
		err = w.create()
	} else {
		err = w.open(filepath.Join(chDir, segmentName(firsts[len(firsts)-1])))
	}
	for i := int64(0); err == nil && i < n; i++ {
		err = w.append(rec(i))
	}
	if cerr := w.close(); err == nil {
		err = cerr
	}
	return w, err
}

// lastRecordTS returns the end of a pchannel (whose segments are clean)
// and the largest timestamp of its last record (0 when it has none left,
// or when the record does not decode as messages).
func lastRecordTS(chDir string, firsts []int64, maxBytes int64) (int64, uint64, error) {
	if len(firsts) == 0 {
		return 0, 0, nil
	}
	var end int64
	for i := len(firsts) - 1; i >= 0; i-- {
		path := filepath.Join(chDir, segmentName(firsts[i]))
		f, err := os.Open(path)
		if err != nil {
			return 0, 0, fmt.Errorf("wal: pad: %w", err)
		}
		s := recordScanner{br: bufio.NewReaderSize(f, 1<<20), maxBytes: maxBytes}
		var n int64
		var lastRec []byte
		for {
			data, err := s.next(true, false)
			if err != nil {
				break // io.EOF: Verify found the segment clean
			}
			n++
			lastRec = append(lastRec[:0], data...)
		}
		_ = f.Close()
		if i == len(firsts)-1 {
			end = firsts[i] + n
		}
		if n == 0 {
			continue
		}
		var ts uint64
		if msgs, err := wal.DecodeRecord(lastRec); err == nil {
			for _, m := range msgs {
				ts = max(ts, m.TimeTick)
			}
		}
		return end, ts, nil
	}
	return end, 0, nil
}

// padWriter appends frames to a pchannel's segments for Pad.
type padWriter struct {
	dir       string
	f         *os.File
	bw        *bufio.Writer
	paths     []string
	next      int64 // offset of the next frame
	synced    int64 // end covered by the last fsync
	fileBytes int64
	unsynced  int64
	segSize   int64
	syncEvery int64
}

func (w *padWriter) open(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("wal: pad: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("wal: pad: %w", err)
	}
	w.f, w.bw, w.fileBytes, w.synced = f, bufio.NewWriterSize(f, 1<<20), fi.Size(), w.next
	w.paths = append(w.paths, path)
	return nil
}

// create starts a new segment file at w.next, fsyncing the directory.
func (w *padWriter) create() error {
	path := filepath.Join(w.dir, segmentName(w.next))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("wal: pad: %w", err)
	}
	if err := syncDirFile(w.dir, (*os.File).Sync); err != nil {
		_ = f.Close()
		return err
	}
	w.f, w.bw, w.fileBytes, w.synced = f, bufio.NewWriterSize(f, 1<<20), 0, w.next
	w.paths = append(w.paths, path)
	return nil
}

func (w *padWriter) append(data []byte) error {
	if w.fileBytes >= w.segSize {
		if err := w.sync(); err != nil {
			return err
		}
		if err := w.f.Close(); err != nil {
			return fmt.Errorf("wal: pad: %w", err)
		}
		w.f = nil
		if err := w.create(); err != nil {
			return err
		}
	}
	var hdr [headerSize]byte
	frameHeader(&hdr, data)
	if _, err := w.bw.Write(hdr[:]); err != nil {
		return fmt.Errorf("wal: pad: %w", err)
	}
	if _, err := w.bw.Write(data); err != nil {
		return fmt.Errorf("wal: pad: %w", err)
	}
	n := int64(headerSize + len(data))
	w.next++
	w.fileBytes += n
	w.unsynced += n
	if w.unsynced >= w.syncEvery {
		return w.sync()
	}
	return nil
}

func (w *padWriter) sync() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("wal: pad: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("wal: pad: sync: %w", err)
	}
	w.synced, w.unsynced = w.next, 0
	return nil
}

func (w *padWriter) close() error {
	if w.f == nil {
		return nil
	}
	err := w.sync()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("wal: pad: %w", cerr)
	}
	w.f = nil
	return err
}
