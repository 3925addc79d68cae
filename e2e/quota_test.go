package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/milvus-io/milvus/pkg/v2/util/merr"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

const (
	codeRateLimit     = 8
	codeQuotaExceeded = 9
)

// restPost posts body to the REST v2 path and returns the decoded answer.
func restPost(ctx context.Context, t *testing.T, s *server, path, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/v2/vectordb/"+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// quotaCollection creates and loads a two-dim collection "q" with a few rows.
func quotaCollection(ctx context.Context, t *testing.T, c *milvusclient.Client) {
	t.Helper()
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("q", 2)))
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("q").
		WithFloatVectorColumn("vector", 2, [][]float32{{1, 0}, {0, 1}, {1, 1}}))
	require.NoError(t, err)
}

// TestQuotaRateLimit: with Milvus's dql/dml rates on, a request over a
// collection's rate gets code 8, which the Go SDK reports as retriable; a
// client that backs off and retries gets through once the bucket has
// refilled. A collection property overrides the configured rate.
func TestQuotaRateLimit(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *app.Config) {
		c.Quota.DQL.Enabled = true
		c.Quota.DQL.QueryRate.Collection.Max = 2 // queries per second
	})
	c := s.client(t)
	ctx := ctxT(t)
	quotaCollection(ctx, t, c)

	query := func() error {
		_, err := c.Query(ctx, milvusclient.NewQueryOption("q").WithFilter("id > 0").WithLimit(10))
		return err
	}
	// The bucket holds two queries, and admits a third into debt.
	var err error
	for range 10 {
		if err = query(); err != nil {
			break
		}
	}
	require.Error(t, err, "ten queries at once exceed 2 qps")
	require.Equal(t, int32(codeRateLimit), merr.Code(err))
	require.True(t, merr.IsRetryableErr(err), "the SDK sees a retriable error: %v", err)
	require.ErrorContains(t, err, "request is rejected by grpc RateLimiter middleware, please retry later: rate limit exceeded[rate=2]")

	// The raw status carries the legacy RateLimit code and the retriable bit too.
	raw := s.rawClient(t)
	resp, rerr := raw.Query(ctx, &milvuspb.QueryRequest{CollectionName: "q", Expr: "id > 0"})
	require.NoError(t, rerr)
	require.Equal(t, int32(codeRateLimit), resp.GetStatus().GetCode())
	require.Equal(t, commonpb.ErrorCode_RateLimit, resp.GetStatus().GetErrorCode()) //nolint:staticcheck // older clients read it
	require.True(t, resp.GetStatus().GetRetriable())

	// Back off and retry: admitted within a couple of seconds.
	deadline := time.Now().Add(5 * time.Second)
	backoff := 50 * time.Millisecond
	for err = query(); err != nil && merr.IsRetryableErr(err) && time.Now().Before(deadline); err = query() {
		time.Sleep(backoff)
		backoff = min(2*backoff, 500*time.Millisecond)
	}
	require.NoError(t, err)

	// Searches and writes are not limited (their rates are -1).
	for range 10 {
		_, err := c.Search(ctx, milvusclient.NewSearchOption("q", 3, []entity.Vector{entity.FloatVector{1, 0}}))
		require.NoError(t, err)
	}

	// collection.insertRate.max.mb on a collection limits its inserts even
	// with dml.enabled off, as in Milvus (0.0001 MB/s ≈ 105 bytes/s).
	require.NoError(t, c.AlterCollectionProperties(ctx, milvusclient.NewAlterCollectionPropertiesOption("q").
		WithProperty("collection.insertRate.max.mb", "0.0001")))
	vecs := make([][]float32, 50)
	for i := range vecs {
		vecs[i] = []float32{float32(i), 1}
	}
	insert := func() error {
		_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("q").WithFloatVectorColumn("vector", 2, vecs))
		return err
	}
	require.NoError(t, insert(), "a full bucket admits a request larger than itself")
	err = insert()
	require.Equal(t, int32(codeRateLimit), merr.Code(err), "%v", err)
	require.True(t, merr.IsRetryableErr(err))
}

// TestQuotaMemoryProtection: with the memory limit configured below what
// the process holds, inserts, upserts and deletes are refused with Milvus's
// "memory quota exceeded" (code 9, not retriable) while searches and
// queries go on; with protection off the same server config writes.
func TestQuotaMemoryProtection(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.client(t)
	ctx := ctxT(t)
	quotaCollection(ctx, t, c)
	s.stop()

	s = startServer(t, dir, func(c *app.Config) {
		c.Quota.LimitWriting.MemProtection.MemoryLimit = 1 << 20 // 1 MiB: far below the process
	})
	c = s.client(t)
	loadAndWait(ctx, t, c, "q")

	const reason = "quota exceeded[reason=memory quota exceeded, please allocate more resources: force deny writing for memory quota exceeded]"
	_, err := c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("q").WithFloatVectorColumn("vector", 2, [][]float32{{2, 2}}))
	require.Equal(t, int32(codeQuotaExceeded), merr.Code(err), "%v", err)
	require.ErrorContains(t, err, reason)
	require.False(t, merr.IsRetryableErr(err))
	_, err = c.Upsert(ctx, milvusclient.NewColumnBasedInsertOption("q").WithInt64Column("id", []int64{1}).
		WithFloatVectorColumn("vector", 2, [][]float32{{2, 2}}))
	require.Equal(t, int32(codeQuotaExceeded), merr.Code(err), "%v", err)
	_, err = c.Delete(ctx, milvusclient.NewDeleteOption("q").WithExpr("id > 0"))
	require.Equal(t, int32(codeQuotaExceeded), merr.Code(err), "%v", err)
	require.ErrorContains(t, err, reason)

	rs, err := c.Query(ctx, milvusclient.NewQueryOption("q").WithFilter("id > 0").WithOutputFields("count(*)").
		WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	n, err := rs.GetColumn("count(*)").GetAsInt64(0)
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "nothing of the refused writes was applied")
	res, err := c.Search(ctx, milvusclient.NewSearchOption("q", 3, []entity.Vector{entity.FloatVector{1, 0}}))
	require.NoError(t, err)
	require.Equal(t, 3, res[0].ResultCount)

	// REST v2 answers as Milvus's REST server answers what its limiter
	// refuses: code 1807 with the limiter's reason.
	out := restPost(ctx, t, s, "entities/insert", `{"collectionName":"q","data":[{"vector":[3,3]}]}`)
	require.EqualValues(t, 1807, out["code"], out)
	require.Equal(t, "request is rejected by limiter, error: "+reason, out["message"])
	out = restPost(ctx, t, s, "entities/query", `{"collectionName":"q","filter":"id > 0","outputFields":["count(*)"]}`)
	require.EqualValues(t, 0, out["code"], out)
	s.stop()

	s = startServer(t, dir, func(c *app.Config) {
		c.Quota.LimitWriting.MemProtection.MemoryLimit = 1 << 20
		c.Quota.LimitWriting.MemProtection.Enabled = false
	})
	c = s.client(t)
	_, err = c.Insert(ctx, milvusclient.NewColumnBasedInsertOption("q").WithFloatVectorColumn("vector", 2, [][]float32{{2, 2}}))
	require.NoError(t, err)
}

// TestQuotaCatalogLimits: configured catalog limits refuse with Milvus's
// codes and messages through the SDK.
func TestQuotaCatalogLimits(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *app.Config) {
		c.RootCoord.MaxCollectionsPerDB = 2
		c.RootCoord.MaxPartitions = 2
	})
	c := s.client(t)
	ctx := ctxT(t)
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("a", 2)))
	require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("b", 2)))
	err := c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("c", 2))
	require.Equal(t, int32(102), merr.Code(err), "%v", err)
	require.ErrorContains(t, err, "exceeded the limit number of collections[dbName=default][limit=2]")

	require.NoError(t, c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("a", "p1")))
	err = c.CreatePartition(ctx, milvusclient.NewCreatePartitionOption("a", "p2"))
	require.Equal(t, int32(codeIllegalArgument), merr.Code(err), "%v", err)
	require.ErrorContains(t, err, "partition number (2) exceeds max configuration (2), collection: a")

	// A database's database.max.collections property overrides the limit.
	require.NoError(t, c.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("roomy").
		WithProperty("database.max.collections", "3")))
	require.NoError(t, c.UseDatabase(ctx, milvusclient.NewUseDatabaseOption("roomy")))
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions(name, 2)))
	}
	err = c.CreateCollection(ctx, milvusclient.SimpleCreateCollectionOptions("d", 2))
	require.ErrorContains(t, err, "exceeded the limit number of collections[dbName=roomy][limit=3]")
}
