package sysinfo

import (
	"fmt"
	"net"
	"runtime"
	"time"
)

// The JSON shapes below carry the field names of Milvus's
// pkg/util/metricsinfo, which pymilvus and Attu parse.

// SystemTopology is the answer to a system_info request.
type SystemTopology struct {
	NodesInfo []SystemTopologyNode `json:"nodes_info"`
}

// SystemTopologyNode is one node of the topology graph.
type SystemTopologyNode struct {
	Identifier int              `json:"identifier"`
	Connected  []ConnectionEdge `json:"connected"`
	Infos      ComponentInfos   `json:"infos"`
}

// ConnectionEdge connects a node to another.
type ConnectionEdge struct {
	ConnectedIdentifier int    `json:"connected_identifier"`
	Type                string `json:"type"`        // "forward" or "manage"
	TargetType          string `json:"target_type"` // the target's role
}

// ComponentInfos describes one node.
type ComponentInfos struct {
	HasError             bool            `json:"has_error"`
	ErrorReason          string          `json:"error_reason"`
	Name                 string          `json:"name"`
	HardwareInfos        HardwareMetrics `json:"hardware_infos"`
	SystemInfo           DeployMetrics   `json:"system_info"`
	CreatedTime          string          `json:"created_time"`
	UpdatedTime          string          `json:"updated_time"`
	Type                 string          `json:"type"`
	ID                   int64           `json:"id"`
	SystemConfigurations map[string]any  `json:"system_configurations"`
	QuotaMetrics         any             `json:"quota_metrics"`
}

// HardwareMetrics are the host figures of a node (bytes; usage in percent of a core).
type HardwareMetrics struct {
	IP               string  `json:"ip"`
	CPUCoreCount     int     `json:"cpu_core_count"`
	CPUCoreUsage     float64 `json:"cpu_core_usage"`
	Memory           uint64  `json:"memory"`
	MemoryUsage      uint64  `json:"memory_usage"`
	Disk             float64 `json:"disk"`
	DiskUsage        float64 `json:"disk_usage"`
	IOWaitPercentage float64 `json:"io_wait_percentage"`
}

// DeployMetrics are the build and deployment of a node.
type DeployMetrics struct {
	SystemVersion string `json:"system_version"`
	DeployMode    string `json:"deploy_mode"`
	BuildVersion  string `json:"build_version"`
	BuildTime     string `json:"build_time"`
	UsedGoVersion string `json:"used_go_version"`
}

// Topology returns the system topology: one node per role.
func (r *Reporter) Topology() SystemTopology {
	probs := r.problems()
	hw := r.hardware()
	b := r.cfg.Build
	deploy := DeployMetrics{
		SystemVersion: b.GitCommit, DeployMode: StandaloneMode, BuildVersion: b.Version,
		BuildTime: b.BuildTime, UsedGoVersion: b.GoVersion,
	}
	now := time.Now()
	configs := map[string]map[string]any{
		RoleProxy:      {"default_partition_name": "_default", "default_index_name": "_default_idx"},
		RoleRootCoord:  {"min_segment_size_to_enable_index": 1024},
		RoleQueryCoord: {"search_channel_prefix": "", "search_result_channel_prefix": ""},
		RoleDataCoord:  {"segment_max_size": r.cfg.SegmentMaxSizeMB},
		RoleQueryNode:  {"simd_type": "auto"},
		RoleDataNode:   {"minio_bucket_name": r.cfg.BucketName, "simd_type": "auto"},
	}
	edges := map[string][]ConnectionEdge{}
	for _, role := range roles[1:] {
		edges[RoleProxy] = append(edges[RoleProxy],
			ConnectionEdge{ConnectedIdentifier: int(nodeID(role)), Type: "forward", TargetType: role})
	}
	edges[RoleQueryCoord] = []ConnectionEdge{{
		ConnectedIdentifier: int(nodeID(RoleQueryNode)), Type: "manage",
		TargetType: RoleQueryNode,
	}}
	edges[RoleDataCoord] = []ConnectionEdge{{
		ConnectedIdentifier: int(nodeID(RoleDataNode)), Type: "manage",
		TargetType: RoleDataNode,
	}}
	var t SystemTopology
	for _, role := range roles {
		id := nodeID(role)
		info := ComponentInfos{
			Name: fmt.Sprintf("%s%d", role, id), HardwareInfos: hw, SystemInfo: deploy,
			CreatedTime: r.cfg.Started.String(), UpdatedTime: now.String(), Type: role, ID: id,
			SystemConfigurations: configs[role],
		}
		if reasons := probs[role]; len(reasons) > 0 {
			info.HasError, info.ErrorReason = true, fmt.Sprint(reasons)
		}
		conn := edges[role]
		if conn == nil {
			conn = []ConnectionEdge{}
		}
		t.NodesInfo = append(t.NodesInfo, SystemTopologyNode{Identifier: int(id), Connected: conn, Infos: info})
	}
	return t
}

// hardware measures the process and its host.
func (r *Reporter) hardware() HardwareMetrics {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h := HardwareMetrics{
		IP: localIP(), CPUCoreCount: runtime.NumCPU(), Memory: totalMemory(),
		MemoryUsage: ms.Sys,
	}
	if up := time.Since(r.cfg.Started).Seconds(); up > 0 {
		h.CPUCoreUsage = processCPU().Seconds() / up * 100
	}
	h.Disk, h.DiskUsage = diskBytes(r.cfg.DataDir)
	return h
}

// localIP is the first non-loopback IPv4 address of the host ("127.0.0.1" if none).
func localIP() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}
