package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/strata-db/strata/internal/objstore"
)

// StagingPrefix is where a restore copies a backup's files in the server's
// object store for the import to read; they are removed when it ends.
const StagingPrefix = "backup-restore"

// RestoreOptions says what to restore.
type RestoreOptions struct {
	// Name is the backup to restore.
	Name string
	// DB is the database to restore into ("" = "default").
	DB string
	// Collections are the backup's collections to restore (none = all).
	Collections []string
	// Rename maps a backed-up collection's name to the name it is restored
	// under (absent: its own name).
	Rename map[string]string
	// RBAC restores the backup's users, roles and grants too (RestoreRBAC).
	RBAC bool
	// Logger reports progress.
	Logger *slog.Logger
}

// Restored is what one collection's restore did.
type Restored struct {
	// From and To are the backed-up and restored names.
	From, To string
	// Rows is how many rows the imports wrote.
	Rows int64
	// Jobs are the import jobs, one per segment.
	Jobs []int64
}

// Restore restores collections of a backup under new (or their own) names:
// it checks that no target exists, copies every file of the selected
// collections from the backup store into the server's object store
// (checking each file's size and SHA-256 first, so a damaged backup fails
// before anything is created), creates each collection with the backed-up
// schema and its partitions, imports each segment with Milvus's backup
// import (end_ts at the backup's flush timestamp, deletes of the segment
// and of L0 segments applied), waits for the imports, and recreates the
// indexes. If anything fails, the collections it created are dropped: no
// half-restored collection is left. The staged files are removed at the end.
func Restore(ctx context.Context, api API, backups, server objstore.Store, opts RestoreOptions) ([]Restored, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.DB == "" {
		opts.DB = "default"
	}
	m, err := ReadManifest(ctx, backups, opts.Name)
	if err != nil {
		return nil, err
	}
	colls, err := pick(m, opts)
	if err != nil {
		return nil, err
	}
	for _, c := range colls {
		to := target(opts, c.Name)
		r, err := api.HasCollection(ctx, &milvuspb.HasCollectionRequest{DbName: opts.DB, CollectionName: to})
		if err := status("check "+to, r.GetStatus(), err); err != nil {
			return nil, err
		}
		if r.GetValue() {
			return nil, fmt.Errorf("backup: the collection %q exists already; restore it under another name (--rename %s=NEW)", to, c.Name)
		}
	}
	stage := path.Join(StagingPrefix, opts.Name, strconv.FormatInt(time.Now().UnixNano(), 10))
	var staged []string
	defer func() {
		for _, k := range staged {
			if err := server.Delete(context.WithoutCancel(ctx), k); err != nil {
				log.Warn("removing a staged backup file failed", "key", k, "err", err)
			}
		}
	}()
	for _, c := range colls {
		for _, s := range c.Segments {
			for _, f := range s.Files {
				if err := stageFile(ctx, backups, server, opts.Name, stage, f); err != nil {
					return nil, err
				}
				staged = append(staged, path.Join(stage, f.Key))
			}
		}
	}
	var created []string
	var out []Restored
	for _, c := range colls {
		to := target(opts, c.Name)
		res, err := restoreCollection(ctx, api, opts.DB, stage, c, to, log, &created)
		if err != nil {
			for _, n := range created {
				r, derr := api.DropCollection(context.WithoutCancel(ctx), &milvuspb.DropCollectionRequest{DbName: opts.DB, CollectionName: n})
				if derr := status("drop "+n, r, derr); derr != nil {
					err = errors.Join(err, derr)
				}
			}
			return nil, err
		}
		out = append(out, *res)
	}
	if opts.RBAC && len(m.RBAC) > 0 {
		var meta milvuspb.RBACMeta
		if err := protojson.Unmarshal(m.RBAC, &meta); err != nil {
			return out, fmt.Errorf("backup: the RBAC of %q does not decode: %w", opts.Name, err)
		}
		r, err := api.RestoreRBAC(ctx, &milvuspb.RestoreRBACMetaRequest{RBACMeta: &meta})
		if err := status("restore RBAC", r, err); err != nil {
			return out, err
		}
	}
	return out, nil
}

// pick selects the backup's collections to restore.
func pick(m *Manifest, opts RestoreOptions) ([]Collection, error) {
	if len(opts.Collections) == 0 {
		for from := range opts.Rename {
			if !slices.ContainsFunc(m.Collections, func(c Collection) bool { return c.Name == from }) {
				return nil, fmt.Errorf("backup: %q has no collection %q to rename", m.Name, from)
			}
		}
		return m.Collections, nil
	}
	var out []Collection
	for _, n := range opts.Collections {
		i := slices.IndexFunc(m.Collections, func(c Collection) bool { return c.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("backup: %q has no collection %q", m.Name, n)
		}
		out = append(out, m.Collections[i])
	}
	return out, nil
}

func target(opts RestoreOptions, name string) string {
	if to, ok := opts.Rename[name]; ok && to != "" {
		return to
	}
	return name
}

// stageFile copies one backup file into the server's store, checking it.
func stageFile(ctx context.Context, backups, server objstore.Store, name, stage string, f File) error {
	data, err := backups.Get(ctx, dataKey(name, f.Key))
	if errors.Is(err, objstore.ErrNotFound) {
		return fmt.Errorf("backup: %q is damaged: the file %s is missing", name, f.Key)
	}
	if err != nil {
		return fmt.Errorf("backup: read %s: %w", f.Key, err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 {
		return fmt.Errorf("backup: %q is damaged: the file %s has %d bytes and SHA-256 %x; the manifest says %d bytes, %s",
			name, f.Key, len(data), sum, f.Size, f.SHA256)
	}
	if err := server.Put(ctx, path.Join(stage, f.Key), data); err != nil {
		return fmt.Errorf("backup: stage %s: %w", f.Key, err)
	}
	return nil
}

// restoreCollection creates one collection and imports its segments,
// appending its name to created once it exists.
func restoreCollection(ctx context.Context, api API, db, stage string, c Collection, to string, log *slog.Logger, created *[]string) (*Restored, error) {
	var schema schemapb.CollectionSchema
	if err := protojson.Unmarshal(c.Schema, &schema); err != nil {
		return nil, fmt.Errorf("backup: the schema of %s does not decode: %w", c.Name, err)
	}
	want := map[string]int64{}
	create := proto.Clone(&schema).(*schemapb.CollectionSchema)
	create.Name, create.Fields = to, nil
	keyMode := false
	for _, f := range schema.GetFields() {
		if f.GetFieldID() >= 100 {
			want[f.GetName()] = f.GetFieldID()
		}
		if f.GetFieldID() < 100 || f.GetIsDynamic() {
			continue
		}
		keyMode = keyMode || f.GetIsPartitionKey()
		create.Fields = append(create.Fields, f)
	}
	raw, err := proto.Marshal(create)
	if err != nil {
		return nil, err
	}
	req := &milvuspb.CreateCollectionRequest{
		DbName: db, CollectionName: to, Schema: raw, ShardsNum: c.ShardsNum,
		ConsistencyLevel: commonpb.ConsistencyLevel(commonpb.ConsistencyLevel_value[c.ConsistencyLevel]),
	}
	if keyMode {
		req.NumPartitions = c.NumPartitions
	}
	for k, v := range c.Properties {
		req.Properties = append(req.Properties, &commonpb.KeyValuePair{Key: k, Value: v})
	}
	r, err := api.CreateCollection(ctx, req)
	if err := status("create "+to, r, err); err != nil {
		return nil, err
	}
	*created = append(*created, to)
	d, err := api.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{DbName: db, CollectionName: to})
	if err := status("describe "+to, d.GetStatus(), err); err != nil {
		return nil, err
	}
	for _, f := range d.GetSchema().GetFields() {
		if id, ok := want[f.GetName()]; ok && id != f.GetFieldID() {
			return nil, fmt.Errorf("backup: %s was created with field %q as ID %d, the backup has it as %d", to, f.GetName(), f.GetFieldID(), id)
		}
	}
	parts := map[int64]string{}
	for _, p := range c.Partitions {
		parts[p.ID] = p.Name
		if keyMode || p.Name == "_default" {
			continue
		}
		r, err := api.CreatePartition(ctx, &milvuspb.CreatePartitionRequest{DbName: db, CollectionName: to, PartitionName: p.Name})
		if err := status("create partition "+p.Name+" of "+to, r, err); err != nil {
			return nil, err
		}
	}
	// Deletes of L0 segments apply to their partition, or every one (-1).
	l0 := map[int64][]string{}
	for _, s := range c.Segments {
		if s.Level == commonpb.SegmentLevel_L0.String() {
			l0[s.PartitionID] = append(l0[s.PartitionID], segPrefix(stage, "delta_log", c.ID, s.PartitionID, s.ID))
		}
	}
	res := &Restored{From: c.Name, To: to}
	for _, s := range c.Segments {
		if s.Level == commonpb.SegmentLevel_L0.String() {
			continue
		}
		part, ok := parts[s.PartitionID]
		if !ok {
			return nil, fmt.Errorf("backup: segment %d of %s is in partition %d, which the backup does not list", s.ID, c.Name, s.PartitionID)
		}
		if keyMode {
			part = ""
		}
		files := []string{segPrefix(stage, "insert_log", c.ID, s.PartitionID, s.ID), segPrefix(stage, "delta_log", c.ID, s.PartitionID, s.ID)}
		files = append(files, l0[s.PartitionID]...)
		files = append(files, l0[-1]...)
		ir, err := api.Import(ctx, &milvuspb.ImportRequest{
			DbName: db, CollectionName: to, PartitionName: part, Files: files,
			Options: []*commonpb.KeyValuePair{
				{Key: "backup", Value: "true"},
				{Key: "end_ts", Value: strconv.FormatUint(c.FlushTS, 10)},
			},
		})
		if err := status("import segment "+strconv.FormatInt(s.ID, 10)+" into "+to, ir.GetStatus(), err); err != nil {
			return nil, err
		}
		res.Jobs = append(res.Jobs, ir.GetTasks()...)
	}
	for _, job := range res.Jobs {
		rows, err := waitImport(ctx, api, job)
		if err != nil {
			return nil, fmt.Errorf("backup: restoring %s into %s: %w", c.Name, to, err)
		}
		res.Rows += rows
	}
	for _, ix := range c.Indexes {
		req := &milvuspb.CreateIndexRequest{DbName: db, CollectionName: to, FieldName: ix.Field, IndexName: ix.Name}
		for k, v := range ix.Params {
			req.ExtraParams = append(req.ExtraParams, &commonpb.KeyValuePair{Key: k, Value: v})
		}
		r, err := api.CreateIndex(ctx, req)
		if err := status("create index "+ix.Name+" of "+to, r, err); err != nil {
			return nil, err
		}
	}
	log.Info("restored a collection", "from", c.Name, "to", to, "rows", res.Rows, "segments", len(res.Jobs))
	return res, nil
}

// segPrefix is a staged segment's prefix of one kind of log.
func segPrefix(stage, kind string, coll, part, seg int64) string {
	return path.Join(stage, kind, strconv.FormatInt(coll, 10), strconv.FormatInt(part, 10), strconv.FormatInt(seg, 10))
}

// waitImport waits for an import job to finish and returns its rows.
func waitImport(ctx context.Context, api API, job int64) (int64, error) {
	for {
		r, err := api.GetImportState(ctx, &milvuspb.GetImportStateRequest{Task: job})
		if err := status("import state", r.GetStatus(), err); err != nil {
			return 0, err
		}
		switch r.GetState() {
		case commonpb.ImportState_ImportCompleted:
			return r.GetRowCount(), nil
		case commonpb.ImportState_ImportFailed, commonpb.ImportState_ImportFailedAndCleaned:
			reason := ""
			for _, kv := range r.GetInfos() {
				if kv.GetKey() == "failed_reason" {
					reason = kv.GetValue()
				}
			}
			return 0, fmt.Errorf("import job %d failed: %s", job, reason)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for import job %d: %w", job, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
