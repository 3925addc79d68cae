package local

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.Defaults()
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
	cfg := Config{Dir: dir, MaxRecordBytes: max(maxRecordBytes, 0)}.Defaults()
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
	}
	for _, first := range firsts[i+1:] {
		path := filepath.Join(chDir, segmentName(first))
		fi, err := os.Stat(path)
		if err != nil {
			return res, fmt.Errorf("wal: cut: %w", err)
		}
		if sr, err := scanSegment(path, cfg.MaxRecordBytes); err == nil {
			res.RemovedRecords += sr.records
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
