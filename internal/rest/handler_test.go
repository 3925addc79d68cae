package rest_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/strata-db/strata/internal/rest"
)

// recorder is a MilvusService that records the metadata of ShowCollections.
type recorder struct {
	milvuspb.UnimplementedMilvusServiceServer
	md  metadata.MD
	req *milvuspb.ShowCollectionsRequest
}

func (r *recorder) ShowCollections(ctx context.Context, req *milvuspb.ShowCollectionsRequest) (*milvuspb.ShowCollectionsResponse, error) {
	r.md, _ = metadata.FromIncomingContext(ctx)
	r.req = req
	return &milvuspb.ShowCollectionsResponse{Status: &commonpb.Status{}, CollectionNames: []string{"x"}}, nil
}

func (r *recorder) ListDatabases(context.Context, *milvuspb.ListDatabasesRequest) (*milvuspb.ListDatabasesResponse, error) {
	return &milvuspb.ListDatabasesResponse{Status: &commonpb.Status{}, DbNames: []string{"default", "hdr", "body"}}, nil
}

func TestMetadataPassThrough(t *testing.T) {
	svc := &recorder{}
	ts := httptest.NewServer(rest.New(svc, slog.New(slog.DiscardHandler)))
	defer ts.Close()
	c := &client{t: t, base: ts.URL, headers: map[string]string{"Authorization": "Bearer root:Milvus", "DB-Name": "hdr"}}

	require.Equal(t, []string{"x"}, decode[[]string](t, c.call("collections/list", m{})))
	require.Equal(t, []string{base64.StdEncoding.EncodeToString([]byte("root:Milvus"))}, svc.md.Get("authorization"))
	require.Equal(t, []string{"hdr"}, svc.md.Get("dbname"))
	require.Equal(t, "hdr", svc.req.GetDbName())

	c.call("collections/list", m{"dbName": "body"})
	require.Equal(t, "body", svc.req.GetDbName(), "dbName in the body wins over the header")

	// A method the service does not implement is a business error, not a crash.
	r := c.fail("collections/has", m{"collectionName": "x"})
	require.Contains(t, r.Message, "not implemented")
}

func TestRoutes(t *testing.T) {
	routes := rest.New(&recorder{}, slog.New(slog.DiscardHandler)).Routes()
	sort.Strings(routes)
	require.Subset(t, routes, []string{
		"collections/list", "collections/has", "collections/describe", "collections/get_stats",
		"collections/get_load_state", "collections/create", "collections/drop", "collections/load",
		"collections/release", "collections/flush", "collections/rename",
		"entities/insert", "entities/upsert", "entities/delete", "entities/query", "entities/get", "entities/search",
		"partitions/list", "partitions/has", "partitions/get_stats", "partitions/create", "partitions/drop",
		"partitions/load", "partitions/release",
		"indexes/list", "indexes/describe", "indexes/create", "indexes/drop",
		"indexes/alter_properties", "indexes/drop_properties",
		"aliases/list", "aliases/describe", "aliases/create", "aliases/drop", "aliases/alter",
		"databases/list", "databases/describe", "databases/create", "databases/drop", "databases/alter",
		"resource_groups/create", "resource_groups/drop", "resource_groups/alter", "resource_groups/describe",
		"resource_groups/list", "resource_groups/transfer_replica",
	})
}
