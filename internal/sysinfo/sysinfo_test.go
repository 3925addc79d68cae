package sysinfo

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/health"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type problems []health.Problem

func (p problems) Problems() []health.Problem { return p }

func TestComponentStatesFollowHealth(t *testing.T) {
	r := New(Config{Started: time.Now()}, problems{{Component: "datanode", Subject: "vchannel v0", Reason: "bad"}})
	st := r.ComponentStates()
	require.Equal(t, RoleProxy, st.GetState().GetRole())
	require.Equal(t, commonpb.StateCode_Healthy, st.GetState().GetStateCode())
	got := map[string]commonpb.StateCode{}
	for _, s := range st.GetSubcomponentStates() {
		got[s.GetRole()] = s.GetStateCode()
	}
	require.Equal(t, map[string]commonpb.StateCode{
		RoleRootCoord:  commonpb.StateCode_Healthy,
		RoleQueryCoord: commonpb.StateCode_Healthy, RoleDataCoord: commonpb.StateCode_Healthy,
		RoleQueryNode: commonpb.StateCode_Healthy, RoleDataNode: commonpb.StateCode_Abnormal,
	}, got)

	var topo map[string][]map[string]any
	resp := r.Metrics(`{"metric_type":"system_info"}`)
	require.Zero(t, resp.GetStatus().GetCode())
	require.NoError(t, json.Unmarshal([]byte(resp.GetResponse()), &topo))
	require.Len(t, topo["nodes_info"], 6)
	for _, n := range topo["nodes_info"] {
		infos := n["infos"].(map[string]any)
		for _, k := range []string{
			"has_error", "error_reason", "name", "hardware_infos", "system_info",
			"created_time", "updated_time", "type", "id", "system_configurations",
		} {
			require.Contains(t, infos, k)
		}
		require.Equal(t, infos["type"] == RoleDataNode, infos["has_error"], infos["name"])
	}
}

func TestMetricsRequests(t *testing.T) {
	r := New(Config{Started: time.Now()})
	require.Zero(t, r.Metrics(`{"req_type":"system_info"}`).GetStatus().GetCode(), "req_type is read first")
	require.EqualValues(t, 1200, r.Metrics(`{"metric_type":"segments"}`).GetStatus().GetCode())
	require.EqualValues(t, 5, r.Metrics(`{}`).GetStatus().GetCode())
	require.EqualValues(t, 5, r.Metrics(`{"metric_type":`).GetStatus().GetCode())
}
