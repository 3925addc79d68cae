package proxy

import (
	"context"
	"strconv"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/msgpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/column"
	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/importer"
)

// Importer runs bulk-import jobs (importer.Manager). Job reports false
// when there is no such job; an error is a failure to find out.
type Importer interface {
	Submit(ctx context.Context, req importer.Request) (int64, error)
	Job(ctx context.Context, id int64) (importer.Job, bool, error)
	Jobs(ctx context.Context, db string, collectionID int64) ([]importer.Job, error)
}

// SetImporter gives the proxy the import job runner; call it before serving.
func (p *Proxy) SetImporter(imp Importer) { p.imp = imp }

var errNoImporter = importer.Failed("bulk import is not configured on this server")

// ImportRows checks a batch of imported rows exactly as Insert checks rows
// (auto-ID keys generated, nulls and defaults filled, dynamic fields and
// functions handled) and routes them as Insert routes them: one insert per
// partition and vchannel, with row IDs. Nothing is written.
func (p *Proxy) ImportRows(ctx context.Context, coll *catalog.Collection, partition string, fds []*schemapb.FieldData, n int) ([]*msgpb.InsertRequest, error) {
	r, err := validateRows(coll, fds, uint32(n), p.genPKs(ctx), false)
	if err != nil {
		return nil, err
	}
	return p.routedRequests(ctx, coll, partition, r)
}

// ImportColumns routes the stored columns of a backup import as Insert
// routes rows (by partition, or partition key, and primary-key hash), with
// new row IDs; the columns came from binlogs of the same schema, so their
// values, keys included, are kept as they are. Every user field must be
// there; the rows' own timestamps (field 1), when given, come back as each
// request's Timestamps. Nothing is written.
func (p *Proxy) ImportColumns(ctx context.Context, coll *catalog.Collection, partition string, cols map[int64]column.Column, n int) ([]*msgpb.InsertRequest, error) {
	r := &rows{n: n, cols: map[int64]column.Column{}}
	if c, ok := cols[1]; ok {
		ts, ok := c.(*column.Ints)
		if !ok || ts.Len() != n {
			return nil, importer.Failed("the backup's timestamps are not %d Int64 values", n)
		}
		r.ts = ts
	}
	for _, f := range coll.Schema.GetFields() {
		id := f.GetFieldID()
		if id < 100 {
			continue
		}
		c, ok := cols[id]
		if !ok || c.Len() != n {
			return nil, importer.Failed("the backup has no column of %d rows for field %q (ID %d)", n, f.GetName(), id)
		}
		r.cols[id] = c
		if f.GetIsPrimaryKey() {
			r.pk = c
		}
	}
	if r.pk == nil {
		return nil, importer.Failed("the backup has no primary-key column")
	}
	return p.routedRequests(ctx, coll, partition, r)
}

// RouteKeys routes primary keys as a Delete routes them: the row indexes
// of each vchannel's keys (an L0 import's deletes).
func (p *Proxy) RouteKeys(coll *catalog.Collection, pks column.Column) map[string][]int {
	out := map[string][]int{}
	for shard, idx := range shardRows(pks, pks.Len(), len(coll.VChannels)) {
		if len(idx) > 0 {
			out[coll.VChannels[shard]] = idx
		}
	}
	return out
}

// routedRequests routes checked rows as Insert routes them and returns the
// inserts' requests.
func (p *Proxy) routedRequests(ctx context.Context, coll *catalog.Collection, partition string, r *rows) ([]*msgpb.InsertRequest, error) {
	inserts, err := p.routedInserts(ctx, coll, partition, r)
	if err != nil {
		return nil, err
	}
	out := make([]*msgpb.InsertRequest, len(inserts))
	for i, in := range inserts {
		out[i] = in.req
	}
	return out, nil
}

// CreateImportJob checks an import request (the collection, the partition,
// the files and their formats) and queues a job for it.
func (p *Proxy) CreateImportJob(ctx context.Context, db, collection, partition string, files [][]string, options map[string]string) (int64, error) {
	if p.imp == nil {
		return 0, errNoImporter
	}
	col, err := p.collection(ctx, db, collection)
	if err != nil {
		return 0, err
	}
	if keyMode(col) {
		if partition != "" {
			return 0, importer.Failed("not allow to set partition name for collection with partition key")
		}
	} else if _, err := p.partitionFor(col, partition); err != nil {
		return 0, err
	}
	var groups [][]string
	for _, f := range files {
		if len(f) > 0 {
			groups = append(groups, f)
		}
	}
	return p.imp.Submit(ctx, importer.Request{
		DB: col.DBName, CollectionID: col.ID, CollectionName: col.Name, Partition: partition,
		Files: groups, Options: options,
	})
}

// ImportJob returns one job of the database.
func (p *Proxy) ImportJob(ctx context.Context, db string, id int64) (importer.Job, error) {
	if p.imp == nil {
		return importer.Job{}, errNoImporter
	}
	j, ok, err := p.imp.Job(ctx, id)
	if err != nil {
		return importer.Job{}, err
	}
	if !ok || (db != "" && j.DB != dbName(ctx, db)) {
		return importer.Job{}, importer.Failed("import job does not exist, jobID=%d", id)
	}
	return j, nil
}

// ImportJobs lists the jobs of the database, or of one collection.
func (p *Proxy) ImportJobs(ctx context.Context, db, collection string) ([]importer.Job, error) {
	if p.imp == nil {
		return nil, errNoImporter
	}
	var id int64
	if collection != "" {
		col, err := p.collection(ctx, db, collection)
		if err != nil {
			return nil, err
		}
		id = col.ID
	}
	return p.imp.Jobs(ctx, dbName(ctx, db), id)
}

// Import implements the v1 import RPC (pymilvus utility.do_bulk_insert) as
// Milvus 2.6 does: its files are one task, and the answer carries the job ID.
func (p *Proxy) Import(ctx context.Context, req *milvuspb.ImportRequest) (*milvuspb.ImportResponse, error) {
	opts := map[string]string{}
	for _, kv := range req.GetOptions() {
		opts[kv.GetKey()] = kv.GetValue()
	}
	id, err := p.CreateImportJob(ctx, req.GetDbName(), req.GetCollectionName(), req.GetPartitionName(), [][]string{req.GetFiles()}, opts)
	if err != nil {
		return &milvuspb.ImportResponse{Status: errcode.Status(err)}, nil
	}
	return &milvuspb.ImportResponse{Status: ok(), Tasks: []int64{id}}, nil
}

// legacyImportState maps a job state to the v1 ImportState.
func legacyImportState(s importer.State) commonpb.ImportState {
	switch s {
	case importer.StatePending:
		return commonpb.ImportState_ImportPending
	case importer.StateImporting:
		return commonpb.ImportState_ImportStarted
	case importer.StateCompleted:
		return commonpb.ImportState_ImportCompleted
	}
	return commonpb.ImportState_ImportFailed
}

// legacyImportStateResponse is a job as the v1 RPCs report it.
func legacyImportStateResponse(j importer.Job, rows bool) *milvuspb.GetImportStateResponse {
	var created int64
	if t, err := time.Parse(time.RFC3339, j.CreateTime); err == nil {
		created = t.Unix()
	}
	out := &milvuspb.GetImportStateResponse{
		Status: ok(), State: legacyImportState(j.State), CreateTs: created,
		Infos: []*commonpb.KeyValuePair{
			{Key: "failed_reason", Value: j.Reason},
			{Key: "progress_percent", Value: strconv.FormatInt(j.Progress, 10)},
		},
	}
	if rows {
		out.RowCount = j.ImportedRows
	}
	return out
}

// GetImportState implements the v1 progress RPC (utility.get_bulk_insert_state).
func (p *Proxy) GetImportState(ctx context.Context, req *milvuspb.GetImportStateRequest) (*milvuspb.GetImportStateResponse, error) {
	j, err := p.ImportJob(ctx, "", req.GetTask())
	if err != nil {
		return &milvuspb.GetImportStateResponse{Status: errcode.Status(err)}, nil
	}
	return legacyImportStateResponse(j, true), nil
}

// ListImportTasks implements the v1 listing RPC (utility.list_bulk_insert_tasks).
func (p *Proxy) ListImportTasks(ctx context.Context, req *milvuspb.ListImportTasksRequest) (*milvuspb.ListImportTasksResponse, error) {
	jobs, err := p.ImportJobs(ctx, req.GetDbName(), req.GetCollectionName())
	if err != nil {
		return &milvuspb.ListImportTasksResponse{Status: errcode.Status(err)}, nil
	}
	out := &milvuspb.ListImportTasksResponse{Status: ok()}
	for _, j := range jobs {
		out.Tasks = append(out.Tasks, legacyImportStateResponse(j, false))
	}
	if l := req.GetLimit(); l > 0 && int64(len(out.Tasks)) > l {
		out.Tasks = out.Tasks[int64(len(out.Tasks))-l:]
	}
	return out, nil
}
