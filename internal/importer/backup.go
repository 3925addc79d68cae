package importer

import (
	"context"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/storage"
)

// The options of a backup import, named as Milvus names them
// (importutilv2: "backup", "start_ts"/"startTs", "end_ts"/"endTs"; keys
// match case-insensitively).
const (
	OptionBackup  = "backup"
	OptionStartTS = "start_ts"
	OptionEndTS   = "end_ts"
)

// hybridFloor separates the two forms a time-range option takes: Milvus
// reads a physical time in milliseconds (and shifts it into a hybrid
// timestamp); a value at or above this (2^46 ms is past the year 4200) is
// taken as a hybrid timestamp already, which lets a restore cut exactly at
// a backup's flush timestamp.
const hybridFloor = 1 << 46

// OptionL0Import asks for Milvus's L0 import: each task names delta-log
// prefixes (an L0 segment's, {prefix}/{logID} below it), whose deletes in
// [start_ts, end_ts] are applied to the collection (milvus-backup restores
// L0 segments with it).
const OptionL0Import = "l0_import"

// isL0Import reports whether a job's options ask for an L0 import.
func isL0Import(opts map[string]string) bool {
	v, _ := option(opts, OptionL0Import)
	return strings.EqualFold(v, "true")
}

// isBackup reports whether a job's options ask for a backup import.
func isBackup(opts map[string]string) bool {
	v, _ := option(opts, OptionBackup)
	return strings.EqualFold(v, "true")
}

// option looks up a key case-insensitively, and its camel-case alias.
func option(opts map[string]string, keys ...string) (string, bool) {
	for _, k := range keys {
		for ok, v := range opts {
			if strings.EqualFold(ok, k) {
				return v, true
			}
		}
	}
	return "", false
}

// timeRange reads a backup import's start_ts and end_ts (0 and MaxUint64
// when absent): rows and deletes with timestamps outside [start, end] are
// left out.
func timeRange(opts map[string]string) (start, end uint64, err error) {
	parse := func(def uint64, keys ...string) (uint64, error) {
		s, ok := option(opts, keys...)
		if !ok {
			return def, nil
		}
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the %s option %q is not a timestamp", keys[0], s)
		}
		if n < hybridFloor {
			n <<= 18
		}
		return n, nil
	}
	if start, err = parse(0, OptionStartTS, "startTs"); err != nil {
		return 0, 0, err
	}
	if end, err = parse(math.MaxUint64, OptionEndTS, "endTs"); err != nil {
		return 0, 0, err
	}
	if start > end {
		return 0, 0, fmt.Errorf("start_ts shouldn't be larger than end_ts, start_ts:%d, end_ts:%d", start, end)
	}
	return start, end, nil
}

// checkBackupFiles checks one task of a backup import: an insert-log
// prefix, then delta-log prefixes (Milvus takes one; Strata takes any
// number, so a restore can add the deletes of L0 segments), all object-store
// keys. An empty delta-log prefix names no deletes (milvus-backup sends ""
// for a segment without delta logs; Milvus finds no segment's deltas under it).
func checkBackupFiles(paths []string) error {
	if len(paths) == 0 || paths[0] == "" {
		return Failed("no insert binlogs to import")
	}
	for i, p := range paths {
		if p == "" && i > 0 {
			continue
		}
		if path.IsAbs(p) {
			return Failed("the backup path %q must be an object-store prefix", p)
		}
	}
	return nil
}

// listInsertLogs lists the keys under an insert-log prefix (ended with
// "/", returned too); none is an error.
func listInsertLogs(ctx context.Context, prefix string, list Lister) (string, []string, error) {
	ins := prefixDir(prefix)
	keys, err := list.ListFiles(ctx, ins)
	if err != nil {
		return "", nil, err
	}
	if len(keys) == 0 {
		return "", nil, fmt.Errorf("no insert binlogs under %s", prefix)
	}
	return ins, keys, nil
}

// backupGroups expands one task of a backup import into the segments it
// names. An insert-log prefix with {fieldID}/{logID} keys below it is one
// segment's, imported with the task's delta-log prefixes as they are. One
// with {segmentID}/{fieldID}/{logID} keys below it is a partition's (or a
// group of segments', as milvus-backup lays them out), as Milvus's backup
// import takes it (datacoord ListBinlogsAndGroupBySegment): each segment
// below it is imported with {deltaPrefix}/{segmentID} of the first delta-log
// prefix; further delta-log prefixes (Strata's own) apply to each segment
// as they are.
func backupGroups(ctx context.Context, paths []string, list Lister) ([][]string, error) {
	ins, keys, err := listInsertLogs(ctx, paths[0], list)
	if err != nil {
		return nil, err
	}
	var segs []string
	seen := map[string]bool{}
	for _, k := range keys {
		parts := strings.Split(strings.TrimPrefix(k, ins), "/")
		switch len(parts) {
		case 2:
			if len(segs) > 0 {
				return nil, fmt.Errorf("%s mixes segment binlogs ({fieldID}/{logID}) with segment directories", paths[0])
			}
		case 3:
			if _, err := strconv.ParseInt(parts[0], 10, 64); err != nil {
				return nil, fmt.Errorf("%s is not an insert binlog key ({prefix}/{segmentID}/{fieldID}/{logID})", k)
			}
			if !seen[parts[0]] {
				seen[parts[0]] = true
				segs = append(segs, parts[0])
			}
			continue
		default:
			return nil, fmt.Errorf("%s is not an insert binlog key ({prefix}/[{segmentID}/]{fieldID}/{logID})", k)
		}
		return [][]string{paths}, nil
	}
	sort.Slice(segs, func(a, b int) bool {
		x, _ := strconv.ParseInt(segs[a], 10, 64)
		y, _ := strconv.ParseInt(segs[b], 10, 64)
		return x < y
	})
	out := make([][]string, 0, len(segs))
	for _, seg := range segs {
		g := []string{ins + seg}
		if len(paths) > 1 && paths[1] != "" {
			g = append(g, prefixDir(paths[1])+seg)
		}
		if len(paths) > 2 {
			g = append(g, paths[2:]...)
		}
		out = append(out, g)
	}
	return out, nil
}

// Lister lists object keys under a prefix (the object store).
type Lister interface {
	ListFiles(ctx context.Context, prefix string) ([]string, error)
}

// backupSegment is one segment of a backup, opened: its insert binlogs per
// field in log order, and the deletes that apply to it.
type backupSegment struct {
	schema *schemapb.CollectionSchema
	files  Files
	logs   map[int64][]string // field ID → binlog keys, in log-ID order
	nfiles int                // binlogs per field (those of the row-ID field)
	// deleted is each deleted key's latest delete timestamp in range.
	deleted    map[any]uint64
	start, end uint64
	size       int64
}

// logID is the log ID a binlog key ends with.
func logID(key string) (int64, error) {
	return strconv.ParseInt(path.Base(key), 10, 64)
}

// prefixDir ends a prefix with "/" so that "…/12" does not match "…/123".
func prefixDir(p string) string {
	return strings.TrimSuffix(p, "/") + "/"
}

// openBackupSegment lists a backup task's binlogs and reads its deletes.
// Insert binlog keys are {insertPrefix}/{fieldID}/{logID} (the tail of an
// insert_log key); delta logs are every object under the other prefixes.
func openBackupSegment(ctx context.Context, schema *schemapb.CollectionSchema, paths []string, files Files, list Lister, start, end uint64) (*backupSegment, error) {
	s := &backupSegment{schema: schema, files: files, logs: map[int64][]string{}, deleted: map[any]uint64{}, start: start, end: end}
	ins, keys, err := listInsertLogs(ctx, paths[0], list)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		rest := strings.TrimPrefix(k, ins)
		dir, base := path.Split(rest)
		field, err := strconv.ParseInt(strings.TrimSuffix(dir, "/"), 10, 64)
		if err != nil || strings.Contains(strings.TrimSuffix(dir, "/"), "/") {
			return nil, fmt.Errorf("%s is not an insert binlog key ({prefix}/{fieldID}/{logID})", k)
		}
		if _, err := strconv.ParseInt(base, 10, 64); err != nil {
			return nil, fmt.Errorf("%s is not an insert binlog key ({prefix}/{fieldID}/{logID})", k)
		}
		s.logs[field] = append(s.logs[field], k)
	}
	for f, ks := range s.logs {
		sort.Slice(ks, func(a, b int) bool {
			x, _ := logID(ks[a])
			y, _ := logID(ks[b])
			return x < y
		})
		s.logs[f] = ks
	}
	s.nfiles = len(s.logs[0])
	if s.nfiles == 0 || len(s.logs[1]) != s.nfiles {
		return nil, fmt.Errorf("no binlogs for the row ID (0) and timestamp (1) fields under %s, or not as many of each (%d, %d)",
			paths[0], len(s.logs[0]), len(s.logs[1]))
	}
	for _, f := range schema.GetFields() {
		n := len(s.logs[f.GetFieldID()])
		switch {
		case f.GetFieldID() < 100:
		case n > s.nfiles:
			return nil, fmt.Errorf("misaligned binlog count, field %d: %d, row IDs: %d", f.GetFieldID(), n, s.nfiles)
		case n < s.nfiles && !column.Fillable(f):
			return nil, fmt.Errorf("no binlog for field %q in %d of the segment's %d files", f.GetName(), s.nfiles-n, s.nfiles)
		}
	}
	pk := primaryKey(schema)
	if pk == nil {
		return nil, fmt.Errorf("the collection has no primary key")
	}
	for _, p := range paths[1:] {
		if p == "" {
			continue
		}
		keys, err := list.ListFiles(ctx, prefixDir(p))
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			if err := s.readDeletes(ctx, k, pk.GetDataType()); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func primaryKey(schema *schemapb.CollectionSchema) *schemapb.FieldSchema {
	for _, f := range schema.GetFields() {
		if f.GetIsPrimaryKey() {
			return f
		}
	}
	return nil
}

// readDeletes adds one delta log's deletes in the time range.
func (s *backupSegment) readDeletes(ctx context.Context, key string, pkType schemapb.DataType) error {
	data, err := s.files.ReadFile(ctx, key)
	if err != nil {
		return err
	}
	s.size += int64(len(data))
	pks, tss, err := storage.DecodeDeltaLog(data)
	if err != nil {
		return fmt.Errorf("delta log %s: %w", key, err)
	}
	for i, ts := range tss {
		if ts < s.start || ts > s.end {
			continue
		}
		k, err := pkAt(pks, i, pkType)
		if err != nil {
			return fmt.Errorf("delta log %s: %w", key, err)
		}
		if ts > s.deleted[k] {
			s.deleted[k] = ts
		}
	}
	return nil
}

// pkAt is row i's key as the deletes map keys it.
func pkAt(c column.Column, i int, pkType schemapb.DataType) (any, error) {
	switch c := c.(type) {
	case *column.Ints:
		if pkType != schemapb.DataType_Int64 {
			return nil, fmt.Errorf("an Int64 key for a %s primary key", pkType)
		}
		return c.Data[i], nil
	case *column.Strings:
		if pkType != schemapb.DataType_VarChar {
			return nil, fmt.Errorf("a VarChar key for a %s primary key", pkType)
		}
		return c.Data[i], nil
	}
	return nil, fmt.Errorf("primary keys of type %T", c)
}

// readField decodes one binlog of a field.
func (s *backupSegment) readField(ctx context.Context, f *schemapb.FieldSchema, key string) (column.Column, error) {
	data, err := s.files.ReadFile(ctx, key)
	if err != nil {
		return nil, err
	}
	s.size += int64(len(data))
	bl, err := storage.DecodeBinlog(data, storage.WithElementType(f.GetElementType()))
	if err != nil {
		return nil, fmt.Errorf("binlog %s: %w", key, err)
	}
	c := bl.Column()
	if c == nil {
		return nil, fmt.Errorf("binlog %s holds no rows", key)
	}
	return c, nil
}

// read returns the stored columns (user fields and the timestamps, field
// 1, by ID) of the rows of
// binlog k (the k-th sync of every field) that are in the time range and
// not deleted, and how many rows that is, and how many rows the binlogs held.
func (s *backupSegment) read(ctx context.Context, k int) (map[int64]column.Column, int, int, error) {
	sysField := func(id int64) *schemapb.FieldSchema {
		return &schemapb.FieldSchema{FieldID: id, DataType: schemapb.DataType_Int64}
	}
	rowIDs, err := s.readField(ctx, sysField(0), s.logs[0][k])
	if err != nil {
		return nil, 0, 0, err
	}
	n := rowIDs.Len()
	tsc, err := s.readField(ctx, sysField(1), s.logs[1][k])
	if err != nil {
		return nil, 0, 0, err
	}
	tss, ok := tsc.(*column.Ints)
	if !ok || tss.Len() != n {
		return nil, 0, 0, fmt.Errorf("binlog %s: %d timestamps for %d row IDs", s.logs[1][k], tsc.Len(), n)
	}
	cols := map[int64]column.Column{}
	for _, f := range s.schema.GetFields() {
		id := f.GetFieldID()
		if id < 100 {
			continue
		}
		logs := s.logs[id]
		missing := s.nfiles - len(logs)
		var c column.Column
		if k < missing {
			// A field added after this sync: its rows read as the field's fill.
			c, err = column.Fill(f, n)
		} else {
			c, err = s.readField(ctx, f, logs[k-missing])
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("field %q: %w", f.GetName(), err)
		}
		if c.Len() != n {
			return nil, 0, 0, fmt.Errorf("field %q: %d rows in binlog %d where the row IDs have %d", f.GetName(), c.Len(), k, n)
		}
		cols[id] = c
	}
	pk := primaryKey(s.schema)
	keep := make([]int, 0, n)
	for i, ts := range tss.Data {
		t := uint64(ts)
		if t < s.start || t > s.end {
			continue
		}
		if len(s.deleted) > 0 {
			key, err := pkAt(cols[pk.GetFieldID()], i, pk.GetDataType())
			if err != nil {
				return nil, 0, 0, err
			}
			// Deleted when a delete is later than the row (an upsert's
			// insert shares its delete's timestamp and survives it).
			if d, ok := s.deleted[key]; ok && d > t {
				continue
			}
		}
		keep = append(keep, i)
	}
	// The rows keep their own timestamps, as Milvus's binlog import keeps
	// them: deletes imported later (l0_import) compare with them.
	cols[1] = tss
	if len(keep) < n {
		for id, c := range cols {
			cols[id] = c.Take(keep)
		}
	}
	return cols, len(keep), n, nil
}

// readL0Deletes reads the deletes in [start, end] of the delta logs under
// an L0 import task's prefixes: each deleted key once, in key order, with
// its latest delete's timestamp.
func readL0Deletes(ctx context.Context, schema *schemapb.CollectionSchema, paths []string, files Files, list Lister, start, end uint64) (column.Column, []uint64, int64, error) {
	pk := primaryKey(schema)
	if pk == nil {
		return nil, nil, 0, fmt.Errorf("the collection has no primary key")
	}
	s := &backupSegment{schema: schema, files: files, deleted: map[any]uint64{}, start: start, end: end}
	for _, p := range paths {
		if p == "" {
			continue
		}
		keys, err := list.ListFiles(ctx, prefixDir(p))
		if err != nil {
			return nil, nil, 0, err
		}
		for _, k := range keys {
			if err := s.readDeletes(ctx, k, pk.GetDataType()); err != nil {
				return nil, nil, 0, err
			}
		}
	}
	var pks column.Column
	var tss []uint64
	if pk.GetDataType() == schemapb.DataType_VarChar {
		c := &column.Strings{T: schemapb.DataType_VarChar}
		for k := range s.deleted {
			c.Data = append(c.Data, k.(string))
		}
		sort.Strings(c.Data)
		for _, k := range c.Data {
			tss = append(tss, s.deleted[k])
		}
		pks = c
	} else {
		c := &column.Ints{T: schemapb.DataType_Int64}
		for k := range s.deleted {
			c.Data = append(c.Data, k.(int64))
		}
		sort.Slice(c.Data, func(a, b int) bool { return c.Data[a] < c.Data[b] })
		for _, k := range c.Data {
			tss = append(tss, s.deleted[k])
		}
		pks = c
	}
	return pks, tss, s.size, nil
}
