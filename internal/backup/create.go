package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/strata-db/strata/internal/objstore"
	"github.com/strata-db/strata/internal/storage"
)

// API is the Milvus API a backup is taken and restored through (a
// milvuspb.MilvusServiceClient connected to the server).
type API = milvuspb.MilvusServiceClient

// CreateOptions says what to back up.
type CreateOptions struct {
	// Name is the backup's name (ValidName).
	Name string
	// DB is the database ("" = "default").
	DB string
	// Collections are the collections to back up (none = every collection of DB).
	Collections []string
	// Server is the API address, recorded in the manifest.
	Server string
	// RootPath is the server's object-storage root path ("files" by default).
	RootPath string
	// Logger reports progress.
	Logger *slog.Logger
}

// status turns a response status (and a transport error) into an error.
func status(what string, st *commonpb.Status, err error) error {
	if err != nil {
		return fmt.Errorf("backup: %s: %w", what, err)
	}
	if st.GetCode() != 0 || st.GetErrorCode() != commonpb.ErrorCode_Success {
		return fmt.Errorf("backup: %s: %s (code %d)", what, st.GetReason(), st.GetCode())
	}
	return nil
}

// Create takes a backup: over the API it describes the collections, flushes
// them (the Flush timestamp is each collection's consistency point), waits
// for the flush and lists the flushed segments; it then copies the
// segments' files from the server's object store (src) into the backup
// store (dst) under opts.Name, and writes the manifest last, so a backup
// without a manifest is one that did not finish. Rows written after the
// flush may be in the copied files (a segment sealed since); a restore
// leaves out every row and delete past FlushTS.
func Create(ctx context.Context, api API, src, dst objstore.Store, opts CreateOptions) (*Manifest, error) {
	if err := ValidName(opts.Name); err != nil {
		return nil, err
	}
	if opts.DB == "" {
		opts.DB = "default"
	}
	if opts.RootPath == "" {
		opts.RootPath = "files"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := dst.Stat(ctx, manifestKey(opts.Name)); err == nil {
		return nil, fmt.Errorf("backup: a backup named %q exists already", opts.Name)
	} else if !errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("backup: %w", err)
	}
	names := opts.Collections
	if len(names) == 0 {
		resp, err := api.ShowCollections(ctx, &milvuspb.ShowCollectionsRequest{DbName: opts.DB})
		if err := status("list the collections", resp.GetStatus(), err); err != nil {
			return nil, err
		}
		names = resp.GetCollectionNames()
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("backup: database %q has no collection to back up", opts.DB)
	}
	m := &Manifest{Version: Version, Name: opts.Name, CreateTime: time.Now().UTC().Format(time.RFC3339), Server: opts.Server, DB: opts.DB}
	for _, n := range names {
		c, err := describe(ctx, api, opts.DB, n)
		if err != nil {
			return nil, err
		}
		m.Collections = append(m.Collections, *c)
	}
	flush, err := api.Flush(ctx, &milvuspb.FlushRequest{DbName: opts.DB, CollectionNames: names})
	if err := status("flush", flush.GetStatus(), err); err != nil {
		return nil, err
	}
	for i := range m.Collections {
		c := &m.Collections[i]
		c.FlushTS = flush.GetCollFlushTs()[c.Name]
		if c.FlushTS == 0 {
			return nil, fmt.Errorf("backup: the flush of %s returned no timestamp", c.Name)
		}
		if err := waitFlushed(ctx, api, opts.DB, c.Name, flush.GetCollSegIDs()[c.Name].GetData(), c.FlushTS); err != nil {
			return nil, err
		}
		if err := segments(ctx, api, opts.DB, c); err != nil {
			return nil, err
		}
		for j := range c.Segments {
			if err := copySegment(ctx, src, dst, opts.RootPath, opts.Name, c, &c.Segments[j]); err != nil {
				return nil, err
			}
		}
		log.Info("backed up a collection", "collection", c.Name, "segments", len(c.Segments), "rows", c.Rows, "flush_ts", c.FlushTS)
	}
	rbac, err := api.BackupRBAC(ctx, &milvuspb.BackupRBACMetaRequest{})
	if err == nil && rbac.GetStatus().GetCode() == 0 && rbac.GetRBACMeta() != nil {
		b, err := protojson.Marshal(rbac.GetRBACMeta())
		if err != nil {
			return nil, fmt.Errorf("backup: encode RBAC: %w", err)
		}
		m.RBAC = b
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := dst.Put(ctx, manifestKey(opts.Name), b); err != nil {
		return nil, fmt.Errorf("backup: write the manifest: %w", err)
	}
	return m, nil
}

// describe reads a collection's schema, partitions and indexes.
func describe(ctx context.Context, api API, db, name string) (*Collection, error) {
	d, err := api.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{DbName: db, CollectionName: name})
	if err := status("describe "+name, d.GetStatus(), err); err != nil {
		return nil, err
	}
	schema, err := protojson.Marshal(d.GetSchema())
	if err != nil {
		return nil, fmt.Errorf("backup: encode the schema of %s: %w", name, err)
	}
	c := &Collection{
		Name: name, ID: d.GetCollectionID(), Schema: schema, ShardsNum: d.GetShardsNum(),
		NumPartitions: d.GetNumPartitions(), ConsistencyLevel: d.GetConsistencyLevel().String(),
	}
	for _, kv := range d.GetProperties() {
		if c.Properties == nil {
			c.Properties = map[string]string{}
		}
		c.Properties[kv.GetKey()] = kv.GetValue()
	}
	parts, err := api.ShowPartitions(ctx, &milvuspb.ShowPartitionsRequest{DbName: db, CollectionName: name})
	if err := status("list the partitions of "+name, parts.GetStatus(), err); err != nil {
		return nil, err
	}
	for i, p := range parts.GetPartitionNames() {
		c.Partitions = append(c.Partitions, Partition{Name: p, ID: parts.GetPartitionIDs()[i]})
	}
	idx, err := api.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{DbName: db, CollectionName: name})
	if err != nil {
		return nil, fmt.Errorf("backup: describe the indexes of %s: %w", name, err)
	}
	if idx.GetStatus().GetCode() == 0 {
		for _, ix := range idx.GetIndexDescriptions() {
			p := map[string]string{}
			for _, kv := range ix.GetParams() {
				p[kv.GetKey()] = kv.GetValue()
			}
			c.Indexes = append(c.Indexes, Index{Field: ix.GetFieldName(), Name: ix.GetIndexName(), Params: p})
		}
	}
	return c, nil
}

// waitFlushed waits until a flush's segments are in object storage.
func waitFlushed(ctx context.Context, api API, db, name string, segs []int64, ts uint64) error {
	for {
		r, err := api.GetFlushState(ctx, &milvuspb.GetFlushStateRequest{DbName: db, CollectionName: name, SegmentIDs: segs, FlushTs: ts})
		if err := status("flush state of "+name, r.GetStatus(), err); err != nil {
			return err
		}
		if r.GetFlushed() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("backup: waiting for the flush of %s: %w", name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// segments lists a collection's flushed segments.
func segments(ctx context.Context, api API, db string, c *Collection) error {
	r, err := api.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{DbName: db, CollectionName: c.Name})
	if err := status("list the segments of "+c.Name, r.GetStatus(), err); err != nil {
		return err
	}
	for _, s := range r.GetInfos() {
		if s.GetState() != commonpb.SegmentState_Flushed {
			continue
		}
		c.Segments = append(c.Segments, Segment{ID: s.GetSegmentID(), PartitionID: s.GetPartitionID(), Level: s.GetLevel().String(), NumRows: s.GetNumRows()})
		if s.GetLevel() != commonpb.SegmentLevel_L0 {
			c.Rows += s.GetNumRows()
		}
	}
	return nil
}

// copySegment copies a segment's insert, delta and stats logs into the
// backup, checking that its row-ID binlogs hold as many rows as the server
// reports (files removed or added under it since would show there).
func copySegment(ctx context.Context, src, dst objstore.Store, root, name string, c *Collection, s *Segment) error {
	var rowIDRows int64
	for _, kind := range []string{"insert_log", "delta_log", "stats_log"} {
		prefix := path.Join(root, kind, fmt.Sprint(c.ID), fmt.Sprint(s.PartitionID), fmt.Sprint(s.ID)) + "/"
		objs, err := src.List(ctx, prefix)
		if err != nil {
			return fmt.Errorf("backup: list %s: %w", prefix, err)
		}
		for _, o := range objs {
			data, err := src.Get(ctx, o.Key)
			if err != nil {
				return fmt.Errorf("backup: segment %d of %s: read %s: %w (compacted and removed during the backup? take it again)", s.ID, c.Name, o.Key, err)
			}
			rel := strings.TrimPrefix(o.Key, strings.TrimSuffix(root, "/")+"/")
			if kind == "insert_log" && strings.HasPrefix(strings.TrimPrefix(o.Key, prefix), "0/") {
				bl, err := storage.DecodeBinlog(data)
				if err != nil {
					return fmt.Errorf("backup: segment %d of %s: %s: %w", s.ID, c.Name, o.Key, err)
				}
				rowIDRows += int64(bl.Column().Len())
			}
			sum := sha256.Sum256(data)
			if err := dst.Put(ctx, dataKey(name, rel), data); err != nil {
				return fmt.Errorf("backup: write %s: %w", rel, err)
			}
			s.Files = append(s.Files, File{Key: rel, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	if s.Level != commonpb.SegmentLevel_L0.String() && rowIDRows != s.NumRows {
		return fmt.Errorf("backup: segment %d of %s: its binlogs hold %d rows, the server reports %d (changed during the backup? take it again)",
			s.ID, c.Name, rowIDRows, s.NumRows)
	}
	return nil
}
