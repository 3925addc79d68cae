package rest

import (
	"context"
	"errors"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/errcode"
)

// Partitions, indexes, aliases and databases: thin translations.

type partitionReq struct {
	collectionReq
	PartitionName  string   `json:"partitionName"`
	PartitionNames []string `json:"partitionNames"`
}

func decodePartition(r *request, many bool) (*partitionReq, error) {
	var req partitionReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	if _, err := req.name(); err != nil {
		return nil, err
	}
	if many {
		if len(req.PartitionNames) == 0 {
			return nil, missing("partitionNames")
		}
	} else if req.PartitionName == "" {
		return nil, missing("partitionName")
	}
	return &req, nil
}

func (h *Handler) partitionRoutes() {
	h.add("partitions/list", true, func(ctx context.Context, r *request) (any, error) {
		name, err := decodeCollection(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.ShowPartitions(ctx, &milvuspb.ShowPartitionsRequest{DbName: r.db, CollectionName: name})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return nonNil(resp.GetPartitionNames()), nil
	})
	h.add("partitions/has", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.HasPartition(ctx, &milvuspb.HasPartitionRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionName: req.PartitionName,
		})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return map[string]any{"has": resp.GetValue()}, nil
	})
	h.add("partitions/get_stats", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.GetPartitionStatistics(ctx, &milvuspb.GetPartitionStatisticsRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionName: req.PartitionName,
		})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return rowCount(resp.GetStats()), nil
	})
	h.add("partitions/create", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.CreatePartition(ctx, &milvuspb.CreatePartitionRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionName: req.PartitionName,
		})
		return nil, check(resp, err)
	})
	h.add("partitions/drop", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DropPartition(ctx, &milvuspb.DropPartitionRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionName: req.PartitionName,
		})
		return nil, check(resp, err)
	})
	h.add("partitions/load", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, true)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.LoadPartitions(ctx, &milvuspb.LoadPartitionsRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionNames: req.PartitionNames,
		})
		return nil, check(resp, err)
	})
	h.add("partitions/release", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodePartition(r, true)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.ReleasePartitions(ctx, &milvuspb.ReleasePartitionsRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, PartitionNames: req.PartitionNames,
		})
		return nil, check(resp, err)
	})
}

// createIndex translates one indexParams entry into CreateIndex.
func (h *Handler) createIndex(ctx context.Context, db, coll string, idx indexReq) error {
	if idx.FieldName == "" {
		return missing("indexParams.fieldName")
	}
	var extra []*commonpb.KeyValuePair
	if idx.IndexType != "" {
		extra = append(extra, &commonpb.KeyValuePair{Key: "index_type", Value: idx.IndexType})
	}
	if idx.MetricType != "" {
		extra = append(extra, &commonpb.KeyValuePair{Key: "metric_type", Value: idx.MetricType})
	}
	for k, v := range idx.Params {
		switch k {
		case "index_type", "indexType":
			if idx.IndexType == "" {
				extra = append(extra, &commonpb.KeyValuePair{Key: "index_type", Value: paramString(v)})
			}
		case "metric_type", "metricType":
			if idx.MetricType == "" {
				extra = append(extra, &commonpb.KeyValuePair{Key: "metric_type", Value: paramString(v)})
			}
		default:
			extra = append(extra, &commonpb.KeyValuePair{Key: k, Value: paramString(v)})
		}
	}
	resp, err := h.svc.CreateIndex(ctx, &milvuspb.CreateIndexRequest{
		DbName: db, CollectionName: coll,
		FieldName: idx.FieldName, IndexName: idx.IndexName, ExtraParams: extra,
	})
	return check(resp, err)
}

type indexNameReq struct {
	collectionReq
	IndexName string `json:"indexName"`
}

// check requires the collection and index names.
func (q *indexNameReq) check() error {
	if _, err := q.name(); err != nil {
		return err
	}
	if q.IndexName == "" {
		return missing("indexName")
	}
	return nil
}

func (h *Handler) indexRoutes() {
	h.add("indexes/list", true, func(ctx context.Context, r *request) (any, error) {
		name, err := decodeCollection(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{DbName: r.db, CollectionName: name})
		if err := check(resp, err); err != nil {
			if e := (*apiError)(nil); errors.As(err, &e) && e.code == errcode.IndexNotFound {
				return []string{}, nil
			}
			return nil, err
		}
		out := []string{}
		for _, d := range resp.GetIndexDescriptions() {
			out = append(out, d.GetIndexName())
		}
		return out, nil
	})
	h.add("indexes/describe", true, func(ctx context.Context, r *request) (any, error) {
		var req indexNameReq
		if err := r.decode(&req); err != nil {
			return nil, err
		}
		if err := req.check(); err != nil {
			return nil, err
		}
		resp, err := h.svc.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, IndexName: req.IndexName,
		})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		out := []map[string]any{}
		for _, d := range resp.GetIndexDescriptions() {
			params := map[string]string{}
			for _, kv := range d.GetParams() {
				params[kv.GetKey()] = kv.GetValue()
			}
			out = append(out, map[string]any{
				"indexName": d.GetIndexName(), "fieldName": d.GetFieldName(),
				"indexType": params["index_type"], "metricType": params["metric_type"],
				"indexState": d.GetState().String(), "indexedRows": d.GetIndexedRows(),
				"totalRows": d.GetTotalRows(), "pendingRows": d.GetPendingIndexRows(),
				"failReason": d.GetIndexStateFailReason(), "params": params,
			})
		}
		return out, nil
	})
	h.add("indexes/create", true, func(ctx context.Context, r *request) (any, error) {
		var req struct {
			collectionReq
			IndexParams []indexReq `json:"indexParams"`
		}
		if err := r.decode(&req); err != nil {
			return nil, err
		}
		name, err := req.name()
		if err != nil {
			return nil, err
		}
		if len(req.IndexParams) == 0 {
			return nil, missing("indexParams")
		}
		for _, idx := range req.IndexParams {
			if err := h.createIndex(ctx, r.db, name, idx); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	h.add("indexes/drop", true, func(ctx context.Context, r *request) (any, error) {
		var req indexNameReq
		if err := r.decode(&req); err != nil {
			return nil, err
		}
		if err := req.check(); err != nil {
			return nil, err
		}
		resp, err := h.svc.DropIndex(ctx, &milvuspb.DropIndexRequest{
			DbName:         r.db,
			CollectionName: req.CollectionName, IndexName: req.IndexName,
		})
		return nil, check(resp, err)
	})
	// indexes/alter_properties sets properties, indexes/drop_properties
	// deletes them (propertyKeys); both are AlterIndex.
	alter := func(ctx context.Context, r *request) (any, error) {
		var req struct {
			indexNameReq
			Properties   map[string]any `json:"properties"`
			PropertyKeys []string       `json:"propertyKeys"`
		}
		if err := r.decode(&req); err != nil {
			return nil, err
		}
		if err := req.check(); err != nil {
			return nil, err
		}
		resp, err := h.svc.AlterIndex(ctx, &milvuspb.AlterIndexRequest{
			DbName: r.db, CollectionName: req.CollectionName,
			IndexName: req.IndexName, ExtraParams: propsOf(req.Properties), DeleteKeys: req.PropertyKeys,
		})
		return nil, check(resp, err)
	}
	h.add("indexes/alter_properties", true, alter)
	h.add("indexes/drop_properties", true, alter)
}

type aliasReq struct {
	AliasName      string `json:"aliasName"`
	CollectionName string `json:"collectionName"`
}

func decodeAlias(r *request, withCollection bool) (*aliasReq, error) {
	var req aliasReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	if req.AliasName == "" {
		return nil, missing("aliasName")
	}
	if withCollection && req.CollectionName == "" {
		return nil, missing("collectionName")
	}
	return &req, nil
}

func (h *Handler) aliasRoutes() {
	h.add("aliases/list", true, func(ctx context.Context, r *request) (any, error) {
		var req collectionReq
		if err := r.decode(&req); err != nil {
			return nil, err
		}
		resp, err := h.svc.ListAliases(ctx, &milvuspb.ListAliasesRequest{DbName: r.db, CollectionName: req.CollectionName})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return nonNil(resp.GetAliases()), nil
	})
	h.add("aliases/describe", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeAlias(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DescribeAlias(ctx, &milvuspb.DescribeAliasRequest{DbName: r.db, Alias: req.AliasName})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return map[string]any{"aliasName": resp.GetAlias(), "collectionName": resp.GetCollection(), "dbName": resp.GetDbName()}, nil
	})
	h.add("aliases/create", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeAlias(r, true)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.CreateAlias(ctx, &milvuspb.CreateAliasRequest{DbName: r.db, Alias: req.AliasName, CollectionName: req.CollectionName})
		return nil, check(resp, err)
	})
	h.add("aliases/drop", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeAlias(r, false)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DropAlias(ctx, &milvuspb.DropAliasRequest{DbName: r.db, Alias: req.AliasName})
		return nil, check(resp, err)
	})
	h.add("aliases/alter", true, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeAlias(r, true)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.AlterAlias(ctx, &milvuspb.AlterAliasRequest{DbName: r.db, Alias: req.AliasName, CollectionName: req.CollectionName})
		return nil, check(resp, err)
	})
}

type databaseReq struct {
	DBName     string         `json:"dbName"`
	Properties map[string]any `json:"properties"`
	// PropertyKeys names the properties databases/drop_properties removes.
	PropertyKeys []string `json:"propertyKeys"`
}

func decodeDatabase(r *request) (*databaseReq, error) {
	var req databaseReq
	if err := r.decode(&req); err != nil {
		return nil, err
	}
	if req.DBName == "" {
		return nil, missing("dbName")
	}
	return &req, nil
}

func propsOf(m map[string]any) []*commonpb.KeyValuePair {
	var out []*commonpb.KeyValuePair
	for k, v := range m {
		out = append(out, &commonpb.KeyValuePair{Key: k, Value: paramString(v)})
	}
	return out
}

func (h *Handler) databaseRoutes() {
	h.add("databases/list", false, func(ctx context.Context, _ *request) (any, error) {
		resp, err := h.svc.ListDatabases(ctx, &milvuspb.ListDatabasesRequest{})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return nonNil(resp.GetDbNames()), nil
	})
	h.add("databases/create", false, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeDatabase(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.CreateDatabase(ctx, &milvuspb.CreateDatabaseRequest{DbName: req.DBName, Properties: propsOf(req.Properties)})
		return nil, check(resp, err)
	})
	h.add("databases/drop", false, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeDatabase(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DropDatabase(ctx, &milvuspb.DropDatabaseRequest{DbName: req.DBName})
		return nil, check(resp, err)
	})
	h.add("databases/describe", false, func(ctx context.Context, r *request) (any, error) {
		req, err := decodeDatabase(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.DescribeDatabase(ctx, &milvuspb.DescribeDatabaseRequest{DbName: req.DBName})
		if err := check(resp, err); err != nil {
			return nil, err
		}
		return map[string]any{
			"dbName": resp.GetDbName(), "dbID": resp.GetDbID(),
			"properties": kvList(resp.GetProperties()),
		}, nil
	})
	alter := func(ctx context.Context, r *request) (any, error) {
		req, err := decodeDatabase(r)
		if err != nil {
			return nil, err
		}
		resp, err := h.svc.AlterDatabase(ctx, &milvuspb.AlterDatabaseRequest{
			DbName:     req.DBName,
			Properties: propsOf(req.Properties), DeleteKeys: req.PropertyKeys,
		})
		return nil, check(resp, err)
	}
	h.add("databases/alter", false, alter)
	h.add("databases/alter_properties", false, alter)
	h.add("databases/drop_properties", false, alter)
}
