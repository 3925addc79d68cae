// Package sysinfo answers the Milvus system RPCs that describe the server
// rather than its data: GetMetrics ("system_info", the JSON topology
// pymilvus and Attu read, with the field names of Milvus's metricsinfo
// package), GetComponentStates (a state per role, Abnormal while the
// role's part reports a health problem) and the build information
// GetVersion and Connect report.
//
// Standalone Strata plays every Milvus role in one process; the topology
// lists one node per role (proxy, rootcoord, querycoord, datacoord,
// querynode, datanode) with the process's hardware figures, connected as
// in a Milvus standalone: the proxy forwards to every role, the query and
// data coordinators manage their nodes.
package sysinfo

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"

	"github.com/strata-db/strata/internal/errcode"
	"github.com/strata-db/strata/internal/health"
)

// Build is the build information of the running binary.
type Build struct {
	// Version is the Milvus API version Strata reports ("v2.6.6").
	Version string
	// GitCommit and BuildTime come from the Go build's VCS stamp ("" when
	// built without one).
	GitCommit, BuildTime string
	GoVersion            string
}

// ReadBuild returns the build information of the running binary.
func ReadBuild(version string) Build {
	b := Build{Version: version, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.GitCommit = s.Value
			case "vcs.time":
				b.BuildTime = s.Value
			}
		}
	}
	return b
}

// Config describes what the reports show.
type Config struct {
	Build Build
	// Started is when the server started (created_time).
	Started time.Time
	// DataDir is the directory whose filesystem the disk figures describe.
	DataDir string
	// SegmentMaxSizeMB and BucketName fill the roles' system_configurations.
	SegmentMaxSizeMB float64
	BucketName       string
}

// Reporter builds the answers.
type Reporter struct {
	cfg     Config
	sources []health.Source
}

// New returns a reporter; sources report the health problems that make a
// role Abnormal.
func New(cfg Config, sources ...health.Source) *Reporter {
	return &Reporter{cfg: cfg, sources: sources}
}

// Milvus role names (typeutil.*Role) in topology order.
const (
	RoleProxy      = "proxy"
	RoleRootCoord  = "rootcoord"
	RoleQueryCoord = "querycoord"
	RoleDataCoord  = "datacoord"
	RoleQueryNode  = "querynode"
	RoleDataNode   = "datanode"
)

var roles = []string{RoleProxy, RoleRootCoord, RoleQueryCoord, RoleDataCoord, RoleQueryNode, RoleDataNode}

// nodeID is a role's node ID (and topology identifier).
func nodeID(role string) int64 {
	for i, r := range roles {
		if r == role {
			return int64(i + 1)
		}
	}
	return 0
}

// affected maps a health problem's component to the roles it makes Abnormal.
func affected(component string) []string {
	switch component {
	case "datanode":
		return []string{RoleDataNode}
	case "querynode":
		return []string{RoleQueryNode}
	case "metastore":
		return []string{RoleRootCoord, RoleQueryCoord, RoleDataCoord}
	case "wal":
		return []string{RoleDataNode, RoleQueryNode}
	}
	return nil
}

// problems groups the current problems' reasons by role.
func (r *Reporter) problems() map[string][]string {
	out := map[string][]string{}
	for _, p := range health.Gather(r.sources...) {
		for _, role := range affected(p.Component) {
			out[role] = append(out[role], p.Subject+": "+p.Reason)
		}
	}
	return out
}

// ComponentStates answers GetComponentStates: the proxy's state, and one
// subcomponent state per other role.
func (r *Reporter) ComponentStates() *milvuspb.ComponentStates {
	probs := r.problems()
	state := func(role string) *milvuspb.ComponentInfo {
		code := commonpb.StateCode_Healthy
		if len(probs[role]) > 0 {
			code = commonpb.StateCode_Abnormal
		}
		return &milvuspb.ComponentInfo{NodeID: nodeID(role), Role: role, StateCode: code}
	}
	out := &milvuspb.ComponentStates{Status: &commonpb.Status{}, State: state(RoleProxy)}
	for _, role := range roles[1:] {
		out.SubcomponentStates = append(out.SubcomponentStates, state(role))
	}
	return out
}

// ServerInfo is the build information Connect reports.
func (r *Reporter) ServerInfo() *commonpb.ServerInfo {
	b := r.cfg.Build
	return &commonpb.ServerInfo{
		BuildTags: b.Version, BuildTime: b.BuildTime, GitCommit: b.GitCommit,
		GoVersion: b.GoVersion, DeployMode: StandaloneMode, Reserved: map[string]string{"server": "strata"},
	}
}

// StandaloneMode is the deploy_mode Milvus standalone reports.
const StandaloneMode = "STANDALONE"

// SystemInfoMetrics is the metric type of the topology request.
const SystemInfoMetrics = "system_info"

// codeMetricNotFound is Milvus's merr code for an unknown metric type.
const codeMetricNotFound int32 = 1200

// Metrics answers GetMetrics. The request is JSON naming "metric_type" (or
// "req_type"); "system_info" (and "system_topology", its older name) return
// the topology. Other types fail with Milvus's "metric not found" (1200).
func (r *Reporter) Metrics(request string) *milvuspb.GetMetricsResponse {
	name := fmt.Sprintf("%s%d", RoleProxy, nodeID(RoleProxy))
	var req map[string]any
	if err := json.Unmarshal([]byte(request), &req); err != nil {
		return &milvuspb.GetMetricsResponse{Status: errcode.Status(errcode.New(errcode.Unexpected,
			"metric_type or req_type not found in request: %v", err)), ComponentName: name}
	}
	typ, ok := req["req_type"].(string)
	if !ok {
		typ, ok = req["metric_type"].(string)
	}
	if !ok {
		return &milvuspb.GetMetricsResponse{Status: errcode.Status(errcode.New(errcode.Unexpected,
			"metric_type or req_type not found in request")), ComponentName: name}
	}
	if typ != SystemInfoMetrics && typ != "system_topology" {
		return &milvuspb.GetMetricsResponse{Status: errcode.Status(errcode.New(codeMetricNotFound,
			"metric not found[metric=%s]", typ)), ComponentName: name}
	}
	b, err := json.Marshal(r.Topology())
	if err != nil {
		return &milvuspb.GetMetricsResponse{Status: errcode.Status(err), ComponentName: name}
	}
	return &milvuspb.GetMetricsResponse{Status: &commonpb.Status{}, Response: string(b), ComponentName: name}
}
