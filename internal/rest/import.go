package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/importer"
)

// Imports runs bulk-import jobs with Milvus's v2 import semantics (the
// proxy): several file groups per job, and per-file progress.
type Imports interface {
	CreateImportJob(ctx context.Context, db, collection, partition string, files [][]string, options map[string]string) (int64, error)
	ImportJob(ctx context.Context, db string, id int64) (importer.Job, error)
	ImportJobs(ctx context.Context, db, collection string) ([]importer.Job, error)
}

// Authorizer checks a request's privilege as the gRPC guard does (nil: no
// authorization).
type Authorizer func(ctx context.Context, method string, req any) (context.Context, error)

type importState struct {
	jobs      Imports
	authorize Authorizer
}

// SetImports serves /v2/vectordb/jobs/import/{create,list,get_progress,describe}
// on top of imp, checking privileges with authorize (when not nil) as the
// gRPC Import, GetImportState and ListImportTasks are checked.
func (h *Handler) SetImports(imp Imports, authorize Authorizer) {
	h.imp = importState{jobs: imp, authorize: authorize}
	h.add("jobs/import/create", true, h.createImport)
	h.add("jobs/import/list", true, h.listImports)
	h.add("jobs/import/get_progress", true, h.importProgress)
	h.add("jobs/import/describe", true, h.importProgress)
}

func (h *Handler) authorizeImport(ctx context.Context, method string, req any) (context.Context, error) {
	if h.imp.authorize == nil {
		return ctx, nil
	}
	ctx, err := h.imp.authorize(ctx, method, req)
	if err != nil {
		return nil, check(nil, err)
	}
	return ctx, nil
}

func importError(err error) error {
	return &apiError{code: errcode.CodeOf(err), msg: err.Error()}
}

func (h *Handler) createImport(ctx context.Context, r *request) (any, error) {
	var body struct {
		CollectionName string         `json:"collectionName"`
		PartitionName  string         `json:"partitionName"`
		Files          [][]string     `json:"files"`
		Options        map[string]any `json:"options"`
	}
	if err := r.decode(&body); err != nil {
		return nil, err
	}
	if body.CollectionName == "" {
		return nil, missing("collectionName")
	}
	if len(body.Files) == 0 {
		return nil, missing("files")
	}
	opts := map[string]string{}
	for k, v := range body.Options {
		switch x := v.(type) {
		case string:
			opts[k] = x
		case json.Number:
			opts[k] = x.String()
		default:
			opts[k] = fmt.Sprint(x)
		}
	}
	ctx, err := h.authorizeImport(ctx, "Import", &milvuspb.ImportRequest{DbName: r.db, CollectionName: body.CollectionName, PartitionName: body.PartitionName})
	if err != nil {
		return nil, err
	}
	id, err := h.imp.jobs.CreateImportJob(ctx, r.db, body.CollectionName, body.PartitionName, body.Files, opts)
	if err != nil {
		return nil, importError(err)
	}
	return map[string]any{"jobId": strconv.FormatInt(id, 10)}, nil
}

func (h *Handler) listImports(ctx context.Context, r *request) (any, error) {
	var body struct {
		CollectionName string `json:"collectionName"`
	}
	if err := r.decode(&body); err != nil {
		return nil, err
	}
	ctx, err := h.authorizeImport(ctx, "ListImportTasks", &milvuspb.ListImportTasksRequest{DbName: r.db, CollectionName: body.CollectionName})
	if err != nil {
		return nil, err
	}
	jobs, err := h.imp.jobs.ImportJobs(ctx, r.db, body.CollectionName)
	if err != nil {
		return nil, importError(err)
	}
	records := make([]map[string]any, 0, len(jobs))
	for _, j := range jobs {
		rec := map[string]any{
			"jobId": strconv.FormatInt(j.ID, 10), "collectionName": j.CollectionName,
			"state": string(j.State), "progress": j.Progress,
		}
		if j.Reason != "" {
			rec["reason"] = j.Reason
		}
		records = append(records, rec)
	}
	return map[string]any{"records": records}, nil
}

func (h *Handler) importProgress(ctx context.Context, r *request) (any, error) {
	var body struct {
		JobID json.Number `json:"jobId"`
	}
	if err := r.decode(&body); err != nil {
		return nil, err
	}
	if body.JobID == "" {
		return nil, missing("jobId")
	}
	id, err := strconv.ParseInt(body.JobID.String(), 10, 64)
	if err != nil {
		return nil, errorf(errcode.IncorrectParameterFormat, "jobId %q is not a job ID", body.JobID.String())
	}
	j, err := h.imp.jobs.ImportJob(ctx, r.db, id)
	if err != nil {
		return nil, importError(err)
	}
	if _, err := h.authorizeImport(ctx, "GetImportState", &milvuspb.GetImportStateRequest{Task: id}); err != nil {
		return nil, err
	}
	details := make([]map[string]any, 0, len(j.Tasks))
	for _, t := range j.Tasks {
		d := map[string]any{
			"fileName": t.FileName(), "fileSize": t.FileSize, "progress": t.Progress,
			"completeTime": t.CompleteTime, "state": string(t.State),
			"importedRows": t.ImportedRows, "totalRows": t.TotalRows,
		}
		if t.Reason != "" {
			d["reason"] = t.Reason
		}
		details = append(details, d)
	}
	out := map[string]any{
		"jobId": strconv.FormatInt(j.ID, 10), "collectionName": j.CollectionName,
		"createTime": j.CreateTime, "completeTime": j.CompleteTime, "state": string(j.State),
		"progress": j.Progress, "importedRows": j.ImportedRows, "totalRows": j.TotalRows,
		"fileSize": j.FileSize(), "details": details,
	}
	if j.Reason != "" {
		out["reason"] = j.Reason
	}
	return out, nil
}
