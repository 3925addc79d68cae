package e2e

import (
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// logLines returns the lines of a log that contain every one of subs.
func logLines(logs *lockedBuffer, subs ...string) []string {
	var out []string
next:
	for _, l := range strings.Split(logs.String(), "\n") {
		for _, s := range subs {
			if !strings.Contains(l, s) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// TestRequestLog: one INFO line per DDL, one WARN line per failed request
// with its code and reason, lifecycle lines for flushes and index builds,
// and the level changed at run time through PUT /log/level.
func TestRequestLog(t *testing.T) {
	logs := &lockedBuffer{}
	lv := new(slog.LevelVar)
	s := startServerLogs(t, t.TempDir(), logs, func(c *app.Config) {
		c.MetricsAddr = "127.0.0.1:0"
		c.LogLevel = lv
	})
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "log_movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	require.Len(t, logLines(logs, "level=INFO", "msg=ddl", "method=CreateCollection", "collection="+coll, "latency="), 1)
	_, err := c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("missing_coll"))
	require.Error(t, err)
	require.Len(t, logLines(logs, "level=WARN", `msg="request failed"`, "method=DescribeCollection",
		"collection=missing_coll", "code=100", "reason=", "latency="), 1)

	_, err = c.Insert(ctx, insertOption(coll, genMovies(0, 100, rand.New(rand.NewPCG(7, 8)))))
	require.NoError(t, err)
	require.Empty(t, logLines(logs, "method=Insert"), "no line per successful write at INFO")
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	require.NotEmpty(t, logLines(logs, `msg="segment flushed"`, "vchannel="))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 8, 32)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	require.Eventually(t, func() bool { return len(logLines(logs, `msg="index built"`, "rows=100")) == 1 },
		10*time.Second, 50*time.Millisecond)
	require.Len(t, logLines(logs, `msg="index build started"`, "rows=100"), 1)
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	require.Len(t, logLines(logs, `msg="loading collection"`), 1)
	require.Len(t, logLines(logs, `msg="collection loaded"`, "rows=100", "took="), 1)
	prog, err := s.rawClient(t).GetLoadingProgress(ctx, &milvuspb.GetLoadingProgressRequest{CollectionName: coll})
	require.NoError(t, err)
	require.EqualValues(t, 100, prog.GetProgress())
	state, err := c.GetLoadState(ctx, milvusclient.NewGetLoadStateOption(coll))
	require.NoError(t, err)
	require.Equal(t, entity.LoadStateLoaded, state.State)
	require.NoError(t, c.ReleaseCollection(ctx, milvusclient.NewReleaseCollectionOption(coll)))

	// The level, read and changed at run time.
	level := func(method, body, contentType string) (int, string) {
		req, err := http.NewRequest(method, "http://"+s.metrics+"/log/level", strings.NewReader(body))
		require.NoError(t, err)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]string
		require.NoError(t, json.Unmarshal(b, &v), string(b))
		return resp.StatusCode, v["level"] + v["error"]
	}
	code, got := level(http.MethodGet, "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "info", got)
	code, got = level(http.MethodPut, `{"level":"debug"}`, "application/json")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "debug", got)
	_, err = c.HasCollection(ctx, milvusclient.NewHasCollectionOption(coll))
	require.NoError(t, err)
	require.NotEmpty(t, logLines(logs, "level=DEBUG", "msg=request", "collection="+coll))
	code, got = level(http.MethodPut, "level=warn", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "warn", got)
	code, got = level(http.MethodPut, `{"level":"loud"}`, "application/json")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, got, "loud")
	require.NoError(t, c.DropCollection(ctx, milvusclient.NewDropCollectionOption(coll)))
	require.Empty(t, logLines(logs, "method=DropCollection"), "INFO lines are off at warn")
}
