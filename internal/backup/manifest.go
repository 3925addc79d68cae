package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/strata-db/strata/internal/objstore"
)

// Version is the manifest format this package writes and reads.
const Version = 1

// ManifestFile is the name of a backup's manifest, under its directory.
const ManifestFile = "manifest.json"

// Manifest describes one backup: what it holds and where.
type Manifest struct {
	// Version is the manifest format (Version).
	Version int `json:"version"`
	// Name is the backup's name, its directory under the backup location.
	Name string `json:"name"`
	// CreateTime is when the backup was taken (RFC 3339).
	CreateTime string `json:"create_time"`
	// Server is the API address the backup was taken from.
	Server string `json:"server"`
	// DB is the database the collections are in.
	DB string `json:"db"`
	// Collections are the backed-up collections.
	Collections []Collection `json:"collections"`
	// RBAC is BackupRBAC's RBACMeta as protobuf JSON (absent when the server
	// has authorization off).
	RBAC json.RawMessage `json:"rbac,omitempty"`
}

// Collection is one collection of a backup, consistent at FlushTS.
type Collection struct {
	// Name and ID are the collection's at backup time.
	Name string `json:"name"`
	ID   int64  `json:"id"`
	// FlushTS is the consistency point: the hybrid timestamp of the Flush
	// the backup took. Rows and deletes after it are left out on restore.
	FlushTS uint64 `json:"flush_ts"`
	// Schema is the collection schema as protobuf JSON (schemapb.CollectionSchema).
	Schema json.RawMessage `json:"schema"`
	// ShardsNum, NumPartitions (partition-key collections), ConsistencyLevel
	// (commonpb.ConsistencyLevel name) and Properties are as described.
	ShardsNum        int32             `json:"shards_num"`
	NumPartitions    int64             `json:"num_partitions,omitempty"`
	ConsistencyLevel string            `json:"consistency_level"`
	Properties       map[string]string `json:"properties,omitempty"`
	// Partitions are the collection's partitions.
	Partitions []Partition `json:"partitions"`
	// Indexes are the collection's indexes (rebuilt on restore).
	Indexes []Index `json:"indexes,omitempty"`
	// Segments are the flushed segments at FlushTS.
	Segments []Segment `json:"segments"`
	// Rows is the sum of the segments' row counts (before deletes).
	Rows int64 `json:"rows"`
}

// Partition is one partition of a backed-up collection.
type Partition struct {
	Name string `json:"name"`
	ID   int64  `json:"id"`
}

// Index is one index of a backed-up collection.
type Index struct {
	Field  string            `json:"field"`
	Name   string            `json:"name"`
	Params map[string]string `json:"params"`
}

// Segment is one flushed segment of a backup and its files.
type Segment struct {
	ID          int64 `json:"id"`
	PartitionID int64 `json:"partition_id"`
	// Level is "L0" (deletes only), "L1" or "L2".
	Level   string `json:"level"`
	NumRows int64  `json:"num_rows"`
	// Files are the segment's insert, delta and stats logs.
	Files []File `json:"files"`
}

// File is one object of a backup: its key under the backup's "binlogs/"
// directory (the server's key without its root path:
// insert_log/{coll}/{part}/{seg}/{field}/{log}, delta_log/…, stats_log/…),
// its size and its SHA-256.
type File struct {
	Key    string `json:"key"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// DataDir is the directory under a backup that holds its files.
const DataDir = "binlogs"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// ValidName checks a backup name: letters, digits, "_", "." and "-", not
// starting with a punctuation character, at most 128 characters.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("backup: the name %q is not valid (letters, digits, _ . -; at most 128)", name)
	}
	return nil
}

// manifestKey is the key of a backup's manifest in the backup store.
func manifestKey(name string) string { return path.Join(name, ManifestFile) }

// dataKey is the key of one of a backup's files in the backup store.
func dataKey(name, key string) string { return path.Join(name, DataDir, key) }

// ReadManifest reads and checks a backup's manifest.
func ReadManifest(ctx context.Context, store objstore.Store, name string) (*Manifest, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	b, err := store.Get(ctx, manifestKey(name))
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("backup: no backup %q (its %s is missing)", name, ManifestFile)
	}
	if err != nil {
		return nil, fmt.Errorf("backup: read the manifest of %q: %w", name, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("backup: the manifest of %q is not valid JSON: %w", name, err)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("backup: the manifest of %q has version %d; this Strata reads version %d", name, m.Version, Version)
	}
	if m.Name != name {
		return nil, fmt.Errorf("backup: the manifest under %q names the backup %q", name, m.Name)
	}
	for _, c := range m.Collections {
		for _, s := range c.Segments {
			for _, f := range s.Files {
				if err := objstore.ValidateKey(f.Key); err != nil || strings.HasPrefix(f.Key, "/") {
					return nil, fmt.Errorf("backup: the manifest of %q has a bad file key %q", name, f.Key)
				}
			}
		}
	}
	return &m, nil
}

// List returns the manifests of the backups in a backup store, by name.
// Directories without a readable manifest (a backup being written, or
// damaged) are left out.
func List(ctx context.Context, store objstore.Store) ([]*Manifest, error) {
	objs, err := store.List(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("backup: list: %w", err)
	}
	var out []*Manifest
	for _, o := range objs {
		dir, file := path.Split(o.Key)
		name := strings.TrimSuffix(dir, "/")
		if file != ManifestFile || name == "" || strings.Contains(name, "/") {
			continue
		}
		m, err := ReadManifest(ctx, store, name)
		if err != nil {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}
