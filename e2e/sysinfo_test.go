package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	"github.com/stretchr/testify/require"
)

// TestSystemRPCs: GetMetrics system_info returns Milvus's topology JSON
// (one node per role, hardware and build info), GetComponentStates reports
// every role healthy, and FlushAll then GetFlushAllState turns true once the
// rows written before it are in object storage.
func TestSystemRPCs(t *testing.T) {
	s := startServer(t, t.TempDir())
	c := s.client(t)
	raw := s.rawClient(t)
	ctx := ctxT(t)

	m, err := raw.GetMetrics(ctx, &milvuspb.GetMetricsRequest{Request: `{"metric_type":"system_info"}`})
	require.NoError(t, err)
	require.Zero(t, m.GetStatus().GetCode(), m.GetStatus().GetReason())
	require.Equal(t, "proxy1", m.GetComponentName())
	var topo struct {
		NodesInfo []struct {
			Identifier int `json:"identifier"`
			Connected  []struct {
				ConnectedIdentifier int    `json:"connected_identifier"`
				Type                string `json:"type"`
				TargetType          string `json:"target_type"`
			} `json:"connected"`
			Infos struct {
				HasError      bool   `json:"has_error"`
				Name          string `json:"name"`
				Type          string `json:"type"`
				HardwareInfos struct {
					CPUCoreCount int    `json:"cpu_core_count"`
					Memory       uint64 `json:"memory"`
				} `json:"hardware_infos"`
				SystemInfo struct {
					DeployMode   string `json:"deploy_mode"`
					BuildVersion string `json:"build_version"`
				} `json:"system_info"`
			} `json:"infos"`
		} `json:"nodes_info"`
	}
	require.NoError(t, json.Unmarshal([]byte(m.GetResponse()), &topo))
	types := map[string]bool{}
	for _, n := range topo.NodesInfo {
		types[n.Infos.Type] = true
		require.False(t, n.Infos.HasError, n.Infos.Name)
		require.Positive(t, n.Infos.HardwareInfos.CPUCoreCount)
		require.Equal(t, "STANDALONE", n.Infos.SystemInfo.DeployMode)
		require.Equal(t, "v2.6.6", n.Infos.SystemInfo.BuildVersion)
		if n.Infos.Type == "proxy" {
			require.Len(t, n.Connected, 5, "the proxy forwards to every other role")
		}
	}
	require.Equal(t, map[string]bool{
		"proxy": true, "rootcoord": true, "querycoord": true, "datacoord": true,
		"querynode": true, "datanode": true,
	}, types)

	bad, err := raw.GetMetrics(ctx, &milvuspb.GetMetricsRequest{Request: `{"metric_type":"no_such"}`})
	require.NoError(t, err)
	require.EqualValues(t, 1200, bad.GetStatus().GetCode())
	bad, err = raw.GetMetrics(ctx, &milvuspb.GetMetricsRequest{Request: `not json`})
	require.NoError(t, err)
	require.NotZero(t, bad.GetStatus().GetCode())

	st, err := raw.GetComponentStates(ctx, &milvuspb.GetComponentStatesRequest{})
	require.NoError(t, err)
	require.Equal(t, "proxy", st.GetState().GetRole())
	require.Equal(t, commonpb.StateCode_Healthy, st.GetState().GetStateCode())
	require.Len(t, st.GetSubcomponentStates(), 5)
	for _, sc := range st.GetSubcomponentStates() {
		require.Equal(t, commonpb.StateCode_Healthy, sc.GetStateCode(), sc.GetRole())
	}

	// FlushAll over every database.
	const coll = "flushall_movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	_, err = c.Insert(ctx, insertOption(coll, genMovies(0, 50, rand.New(rand.NewPCG(5, 6)))))
	require.NoError(t, err)
	fa, err := raw.FlushAll(ctx, &milvuspb.FlushAllRequest{})
	require.NoError(t, err)
	require.Zero(t, fa.GetStatus().GetCode(), fa.GetStatus().GetReason())
	require.NotZero(t, fa.GetFlushAllTs())
	require.Eventually(t, func() bool {
		r, err := raw.GetFlushAllState(ctx, &milvuspb.GetFlushAllStateRequest{FlushAllTs: fa.GetFlushAllTs()})
		require.NoError(t, err)
		require.Zero(t, r.GetStatus().GetCode(), r.GetStatus().GetReason())
		return r.GetFlushed()
	}, 20*time.Second, 100*time.Millisecond)
	stats, err := c.GetCollectionStats(ctx, milvusclient.NewGetCollectionStatsOption(coll))
	require.NoError(t, err)
	require.Equal(t, "50", stats["row_count"], "the flushed rows are counted")
	// A database that does not exist is refused.
	r, err := raw.GetFlushAllState(ctx, &milvuspb.GetFlushAllStateRequest{FlushAllTs: fa.GetFlushAllTs(), DbName: "nope"})
	require.NoError(t, err)
	require.EqualValues(t, 800, r.GetStatus().GetCode())

	v, err := raw.GetVersion(ctx, &milvuspb.GetVersionRequest{})
	require.NoError(t, err)
	require.Equal(t, "v2.6.6", v.GetVersion())
	conn, err := raw.Connect(ctx, &milvuspb.ConnectRequest{})
	require.NoError(t, err)
	require.Equal(t, "STANDALONE", conn.GetServerInfo().GetDeployMode())
	require.NotEmpty(t, conn.GetServerInfo().GetGoVersion())
}
