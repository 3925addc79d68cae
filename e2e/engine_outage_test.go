package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
	"github.com/strata-db/strata/internal/enginetest"
)

// engineHealth is the part of /healthz/detail the outage test reads.
type engineHealth struct {
	Status          string `json:"status"`
	WritesAvailable bool   `json:"writesAvailable"`
	Problems        []struct {
		Component, Subject, Reason string
	} `json:"problems"`
}

func readEngineHealth(t *testing.T, s *server) engineHealth {
	t.Helper()
	resp, err := http.Get("http://" + s.metrics + "/healthz/detail")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h engineHealth
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return h
}

// TestEtcdOutageReported: with the meta store on etcd, stopping etcd makes
// /healthz/detail report it (degraded, writes unavailable) and logs it, a
// DDL fails within the meta store's request timeout instead of waiting for
// the client's deadline, and once etcd is back the problem clears and DDL
// works again.
func TestEtcdOutageReported(t *testing.T) {
	etcd := enginetest.NewEtcd(t)
	withEtcd := func(c *app.Config) {
		c.Engines.Meta.Type, c.Engines.Meta.Etcd.Endpoints, c.Engines.Meta.Etcd.Root = app.EngineEtcd, []string{etcd.URL}, "strata/"
		c.Engines.Meta.Etcd.RequestTimeout = time.Second
		c.MetricsAddr = "127.0.0.1:0"
	}
	s := startServer(t, t.TempDir(), withEtcd)
	c := s.client(t)
	ctx := ctxT(t)
	require.Equal(t, "ok", readEngineHealth(t, s).Status)

	etcd.Stop()
	require.Eventually(t, func() bool {
		h := readEngineHealth(t, s)
		return h.Status == "degraded" && !h.WritesAvailable && len(h.Problems) == 1 &&
			h.Problems[0].Component == "engines" && h.Problems[0].Subject == "meta etcd ["+etcd.URL+"]"
	}, time.Minute, 200*time.Millisecond, "the etcd outage is reported")
	done := make(chan error, 1)
	go func() {
		done <- c.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("during"))
	}()
	select {
	case err := <-done:
		require.Error(t, err, "DDL needs the meta store")
	case <-time.After(time.Minute):
		t.Fatal("a DDL waited for an unreachable etcd without end")
	}

	etcd.Start()
	require.Eventually(t, func() bool { return readEngineHealth(t, s).Status == "ok" }, time.Minute, 200*time.Millisecond,
		"the problem clears once etcd answers")
	require.NoError(t, c.CreateDatabase(ctx, milvusclient.NewCreateDatabaseOption("after")))
}
