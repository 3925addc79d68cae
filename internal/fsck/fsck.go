package fsck

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Kind names the part of a data directory a Damage is in.
type Kind string

// Damage kinds.
const (
	// KindMeta is a meta-store record that cannot be read or decoded, or
	// that contradicts another record.
	KindMeta Kind = "meta"
	// KindWAL is a damaged WAL file or record.
	KindWAL Kind = "wal"
	// KindBinlog is an insert binlog.
	KindBinlog Kind = "binlog"
	// KindStatslog is a PK stats log.
	KindStatslog Kind = "statslog"
	// KindDeltalog is a delete (delta) log.
	KindDeltalog Kind = "deltalog"
	// KindIndex is an index file.
	KindIndex Kind = "index"
)

// Damage is one thing found wrong in a data directory and what it affects.
// Zero fields are unknown or do not apply.
type Damage struct {
	Kind         Kind   `json:"kind"`
	Collection   string `json:"collection,omitempty"`
	CollectionID int64  `json:"collection_id,omitempty"`
	// PChannel is the WAL pchannel of a KindWAL damage.
	PChannel  string `json:"pchannel,omitempty"`
	SegmentID int64  `json:"segment_id,omitempty"`
	// Rows is the affected segment's row count.
	Rows    int64  `json:"rows,omitempty"`
	FieldID int64  `json:"field_id,omitempty"`
	Field   string `json:"field,omitempty"`
	// File is the object key or file path of the damaged file.
	File string `json:"file,omitempty"`
	// Problem says what is wrong.
	Problem string `json:"problem"`
	// Affects says what the damage does to the served data.
	Affects string `json:"affects,omitempty"`
}

// String formats d as one line of `strata check` output.
func (d Damage) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "DAMAGED %s:", d.Kind)
	if d.Collection != "" || d.CollectionID != 0 {
		fmt.Fprintf(&b, " collection=%q(%d)", d.Collection, d.CollectionID)
	}
	if d.PChannel != "" {
		fmt.Fprintf(&b, " pchannel=%s", d.PChannel)
	}
	if d.SegmentID != 0 {
		fmt.Fprintf(&b, " segment=%d", d.SegmentID)
	}
	if d.Field != "" || d.FieldID != 0 {
		fmt.Fprintf(&b, " field=%q(%d)", d.Field, d.FieldID)
	}
	if d.File != "" {
		fmt.Fprintf(&b, " file=%s", d.File)
	}
	fmt.Fprintf(&b, ": %s", d.Problem)
	if d.Affects != "" {
		fmt.Fprintf(&b, " (affects: %s)", d.Affects)
	}
	return b.String()
}

// Stats counts what a check looked at.
type Stats struct {
	Collections int   `json:"collections"`
	Segments    int   `json:"segments"`
	Files       int   `json:"files"`
	Bytes       int64 `json:"bytes"`
	Records     int   `json:"records"`
}

func (s *Stats) add(o Stats) {
	s.Collections += o.Collections
	s.Segments += o.Segments
	s.Files += o.Files
	s.Bytes += o.Bytes
	s.Records += o.Records
}

// Result is what one Checker found.
type Result struct {
	Damage []Damage
	// Notes are findings that are not damage (a torn WAL tail, which the
	// server repairs at start): printed, but the directory stays clean.
	Notes []string
	Stats Stats
}

// Checker checks one part of a data directory. Check returns the damage
// found; an error means the part could not be checked (unreadable,
// locked), which is not itself damage.
type Checker struct {
	// Name identifies the checker in the report ("catalog", "meta", "wal").
	Name  string
	Check func(ctx context.Context, dir string) (Result, error)
}

// Report is the outcome of Check.
type Report struct {
	Dir    string   `json:"data_dir"`
	Damage []Damage `json:"damage"`
	Stats  Stats    `json:"checked"`
	// Notes are findings that are not damage (see Result.Notes).
	Notes []string `json:"notes,omitempty"`
	// Incomplete lists the checkers that could not run, with why.
	Incomplete []string `json:"incomplete,omitempty"`
}

// Clean reports whether every checker ran and none found damage.
func (r *Report) Clean() bool { return len(r.Damage) == 0 && len(r.Incomplete) == 0 }

// Check runs every checker over dir, in order, and collects their findings.
func Check(ctx context.Context, dir string, checkers []Checker) *Report {
	r := &Report{Dir: dir, Damage: []Damage{}}
	for _, c := range checkers {
		res, err := c.Check(ctx, dir)
		r.Damage = append(r.Damage, res.Damage...)
		r.Notes = append(r.Notes, res.Notes...)
		r.Stats.add(res.Stats)
		if err != nil {
			r.Incomplete = append(r.Incomplete, fmt.Sprintf("%s: %v", c.Name, err))
		}
	}
	return r
}

// WriteText writes the report as `strata check` prints it: one line per
// damage, then a summary of what is affected.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, d := range r.Damage {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	for _, s := range r.Notes {
		fmt.Fprintf(&b, "NOTE %s\n", s)
	}
	for _, s := range r.Incomplete {
		fmt.Fprintf(&b, "NOT CHECKED %s\n", s)
	}
	st := r.Stats
	fmt.Fprintf(&b, "checked %s: %d collections, %d segments, %d files (%d bytes), %d meta records\n",
		r.Dir, st.Collections, st.Segments, st.Files, st.Bytes, st.Records)
	switch {
	case r.Clean():
		b.WriteString("clean: no damage found\n")
	case len(r.Damage) == 0:
		b.WriteString("incomplete: no damage found in what could be checked\n")
	default:
		segs := map[int64]Damage{}
		for _, d := range r.Damage {
			if d.SegmentID != 0 {
				segs[d.SegmentID] = d
			}
		}
		ids := make([]int64, 0, len(segs))
		for id := range segs {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		fmt.Fprintf(&b, "damaged: %d problems in %d segments\n", len(r.Damage), len(ids))
		for _, id := range ids {
			d := segs[id]
			fmt.Fprintf(&b, "  segment %d of collection %q (%d): %d rows\n", id, d.Collection, d.CollectionID, d.Rows)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	type out struct {
		*Report
		Clean bool `json:"clean"`
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out{Report: r, Clean: r.Clean()})
}
