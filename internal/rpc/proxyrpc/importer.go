package proxyrpc

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/strata-db/strata/internal/importer"
	"github.com/strata-db/strata/internal/rpc"
	proxyv1 "github.com/strata-db/strata/internal/rpcpb/strata/proxy/v1"
)

// Importer runs bulk-import jobs (proxy.Importer; importer.Manager).
type Importer interface {
	Submit(ctx context.Context, req importer.Request) (int64, error)
	Job(ctx context.Context, id int64) (importer.Job, bool, error)
	Jobs(ctx context.Context, db string, collectionID int64) ([]importer.Job, error)
}

// ImportServer serves ImportService from the coordinator's import jobs.
type ImportServer struct {
	proxyv1.UnimplementedImportServiceServer
	imp Importer
}

// NewImportServer returns a server over the import job runner.
func NewImportServer(imp Importer) *ImportServer { return &ImportServer{imp: imp} }

// SubmitImport implements ImportService.SubmitImport.
func (s *ImportServer) SubmitImport(ctx context.Context, req *proxyv1.SubmitImportRequest) (*proxyv1.SubmitImportResponse, error) {
	r, err := decodeJSON[importer.Request]("import request", req.GetRequest())
	if err != nil {
		return nil, invalid(err)
	}
	id, err := s.imp.Submit(ctx, r)
	if err != nil {
		return nil, err
	}
	return &proxyv1.SubmitImportResponse{JobId: id}, nil
}

// GetImportJob implements ImportService.GetImportJob.
func (s *ImportServer) GetImportJob(ctx context.Context, req *proxyv1.GetImportJobRequest) (*proxyv1.GetImportJobResponse, error) {
	j, ok, err := s.imp.Job(ctx, req.GetJobId())
	if err != nil {
		return nil, err
	}
	if !ok {
		return &proxyv1.GetImportJobResponse{}, nil
	}
	b, err := encodeJSON("import job", j)
	if err != nil {
		return nil, err
	}
	return &proxyv1.GetImportJobResponse{Found: true, Job: b}, nil
}

// ListImportJobs implements ImportService.ListImportJobs.
func (s *ImportServer) ListImportJobs(ctx context.Context, req *proxyv1.ListImportJobsRequest) (*proxyv1.ListImportJobsResponse, error) {
	jobs, err := s.imp.Jobs(ctx, req.GetDb(), req.GetCollectionId())
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(jobs))
	for i, j := range jobs {
		b, err := encodeJSON("import job", j)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return &proxyv1.ListImportJobsResponse{Jobs: out}, nil
}

// ImportClient is the coordinator's import jobs over ImportService
// (proxy.Importer). Submit is sent once (rpc.NoRetry): a retried submit
// could start the job twice. A failed Job or Jobs call is its error, never
// "no such job" or none.
type ImportClient struct {
	c      proxyv1.ImportServiceClient
	logger *slog.Logger
}

// NewImportClient returns a client of ImportService over conn.
func NewImportClient(conn grpc.ClientConnInterface, logger *slog.Logger) *ImportClient {
	return &ImportClient{c: proxyv1.NewImportServiceClient(conn), logger: logger}
}

// Submit implements proxy.Importer.
func (c *ImportClient) Submit(ctx context.Context, req importer.Request) (int64, error) {
	b, err := encodeJSON("import request", req)
	if err != nil {
		return 0, err
	}
	resp, err := c.c.SubmitImport(ctx, &proxyv1.SubmitImportRequest{Request: b}, rpc.NoRetry())
	if err != nil {
		return 0, err
	}
	return resp.GetJobId(), nil
}

// Job implements proxy.Importer.
func (c *ImportClient) Job(ctx context.Context, id int64) (importer.Job, bool, error) {
	resp, err := c.c.GetImportJob(ctx, &proxyv1.GetImportJobRequest{JobId: id})
	if err != nil {
		return importer.Job{}, false, err
	}
	if !resp.GetFound() {
		return importer.Job{}, false, nil
	}
	j, err := decodeJSON[importer.Job]("import job", resp.GetJob())
	if err != nil {
		return importer.Job{}, false, err
	}
	return j, true, nil
}

// Jobs implements proxy.Importer.
func (c *ImportClient) Jobs(ctx context.Context, db string, collectionID int64) ([]importer.Job, error) {
	resp, err := c.c.ListImportJobs(ctx, &proxyv1.ListImportJobsRequest{Db: db, CollectionId: collectionID})
	if err != nil {
		return nil, err
	}
	out := make([]importer.Job, len(resp.GetJobs()))
	for i, b := range resp.GetJobs() {
		if out[i], err = decodeJSON[importer.Job]("import job", b); err != nil {
			return nil, err
		}
	}
	return out, nil
}
