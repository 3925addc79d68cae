package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

func TestRateLimitCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewRateLimit(reg)
	m.RateLimited("DQLQuery", true)
	m.RateLimited("DQLQuery", false)
	m.RateLimited("DMLInsert", true)
	fams := gather(t, reg)
	l := func(msgType, status string) map[string]string {
		return map[string]string{"node_id": NodeID, "msg_type": msgType, "status": status}
	}
	require.InDelta(t, 2, value(fams, "milvus_proxy_rate_limit_req_count", l("DQLQuery", Total)), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_rate_limit_req_count", l("DQLQuery", Success)), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_rate_limit_req_count", l("DQLQuery", Fail)), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_rate_limit_req_count", l("DMLInsert", Success)), 0)
}
