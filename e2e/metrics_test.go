package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/milvus-io/milvus/client/v2/entity"
	"github.com/milvus-io/milvus/client/v2/index"
	"github.com/milvus-io/milvus/client/v2/milvusclient"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strata-db/strata/internal/app"
)

// milvusSeries are the Milvus series Strata claims to implement
// (docs/ops/metrics.md); the ones a published dashboard queries must select
// series after the traffic of TestMilvusDashboardSeries.
var milvusSeries = []string{
	"milvus_num_node", "milvus_build_info",
	"milvus_proxy_req_count", "milvus_proxy_req_latency", "milvus_proxy_sq_latency",
	"milvus_proxy_collection_sq_latency", "milvus_proxy_mutation_latency", "milvus_proxy_collection_mutation_latency",
	"milvus_proxy_insert_vectors_count", "milvus_proxy_search_vectors_count", "milvus_proxy_delete_vectors_count",
	"milvus_proxy_upsert_vectors_count", "milvus_proxy_received_nq", "milvus_proxy_restful_api_req_count",
	"milvus_proxy_restful_api_req_latency",
	"milvus_rootcoord_ddl_req_count", "milvus_rootcoord_ddl_req_latency", "milvus_rootcoord_collection_num",
	"milvus_rootcoord_partition_num", "milvus_rootcoord_proxy_num", "milvus_rootcoord_dml_channel_num",
	"milvus_rootcoord_entity_num",
	"milvus_datacoord_datanode_num", "milvus_datacoord_collection_num", "milvus_datacoord_segment_num",
	"milvus_datacoord_stored_rows_num", "milvus_datacoord_stored_binlog_size", "milvus_datacoord_index_task_count",
	"milvus_datacoord_task_count", "milvus_datacoord_channel_checkpoint_unix_seconds",
	"milvus_datacoord_consume_datanode_tt_lag_ms",
	"milvus_datanode_flush_buffer_op_count", "milvus_datanode_flush_req_count", "milvus_datanode_flushed_data_rows",
	"milvus_datanode_flushed_data_size", "milvus_datanode_save_latency", "milvus_datanode_consume_tt_lag_ms",
	"milvus_datanode_flowgraph_num",
	"milvus_indexnode_index_task_count", "milvus_indexnode_build_index_latency",
	"milvus_querycoord_collection_num", "milvus_querycoord_querynode_num",
	"milvus_querynode_sq_req_count", "milvus_querynode_sq_req_latency", "milvus_querynode_segment_num",
	"milvus_querynode_entity_num", "milvus_querynode_collection_num", "milvus_querynode_partition_num",
	"milvus_querynode_dml_vchannel_num", "milvus_querynode_flowgraph_num", "milvus_querynode_consume_tt_lag_ms",
	"strata_wal_checkpoint_lag_messages",
}

// startMetricsServer starts a server with its metrics port open and
// returns it with the metrics address.
func startMetricsServer(t *testing.T) (*server, string) {
	t.Helper()
	s := startServer(t, t.TempDir(), func(c *app.Config) { c.MetricsAddr = "127.0.0.1:0" })
	return s, s.metrics
}

// scrape reads the server's /metrics.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// seriesValue sums the series of a family whose labels include want.
func seriesValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, int) {
	var sum float64
	n := 0
	for _, m := range fams[name].GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		n++
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, n
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// selector is one metric selector of a PromQL expression.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct {
	label, op, value string
}

var (
	selectorRe = regexp.MustCompile(`\b((?:milvus|strata)_[a-z0-9_]+)(\{[^}]*\})?`)
	matcherRe  = regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
)

// dashboardSelectors reads the metric selectors of the checked-in
// dashboard expressions.
func dashboardSelectors(t *testing.T) []selector {
	t.Helper()
	f, err := os.Open("testdata/milvus-dashboard-exprs.txt")
	require.NoError(t, err)
	defer f.Close()
	var out []selector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, m := range selectorRe.FindAllStringSubmatch(line, -1) {
			s := selector{name: m[1]}
			for _, mm := range matcherRe.FindAllStringSubmatch(m[2], -1) {
				s.matchers = append(s.matchers, matcher{label: mm[1], op: mm[2], value: mm[3]})
			}
			out = append(out, s)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// family resolves a selector's name to a scraped family: the name itself,
// or a histogram's _bucket/_sum/_count series.
func family(fams map[string]*dto.MetricFamily, name string) (*dto.MetricFamily, bool) {
	if f, ok := fams[name]; ok {
		return f, true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if f, ok := fams[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
				return f, true
			}
		}
	}
	return nil, false
}

// selects reports whether some series of f satisfies the selector's
// matchers. Matchers on labels a Kubernetes scrape adds (namespace, pod,
// app_kubernetes_io_*) and on dashboard variables ($db) are ignored.
func selects(f *dto.MetricFamily, s selector) bool {
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		okAll := true
		for _, mt := range s.matchers {
			if strings.Contains(mt.value, "$") || mt.label == "namespace" || mt.label == "pod" ||
				strings.HasPrefix(mt.label, "app_kubernetes_io") {
				continue
			}
			re := regexp.MustCompile("^(?:" + mt.value + ")$")
			v := have[mt.label]
			var ok bool
			switch mt.op {
			case "=":
				ok = v == mt.value
			case "!=":
				ok = v != mt.value
			case "=~":
				ok = re.MatchString(v)
			case "!~":
				ok = !re.MatchString(v)
			}
			if !ok {
				okAll = false
				break
			}
		}
		if okAll {
			return true
		}
	}
	return false
}

// TestMilvusDashboardSeries drives traffic through the Go SDK and REST, then
// checks that every Milvus series Strata claims is exported with Milvus's
// labels, and that each selector of the published Milvus dashboard on a
// claimed series selects data.
func TestMilvusDashboardSeries(t *testing.T) {
	standaloneOnly(t, "scrapes every role's series from one process's metrics port")
	s, metricsAddr := startMetricsServer(t)
	c := s.client(t)
	ctx := ctxT(t)
	const coll = "metrics_movies"
	require.NoError(t, c.CreateCollection(ctx, milvusclient.NewCreateCollectionOption(coll, moviesSchema(coll))))
	rng := rand.New(rand.NewPCG(3, 4))
	ms := genMovies(0, 300, rng)
	res, err := c.Insert(ctx, insertOption(coll, ms))
	require.NoError(t, err)
	require.EqualValues(t, 300, res.InsertCount)
	ft, err := c.Flush(ctx, milvusclient.NewFlushOption(coll))
	require.NoError(t, err)
	require.NoError(t, ft.Await(ctx))
	it, err := c.CreateIndex(ctx, milvusclient.NewCreateIndexOption(coll, "vector", index.NewHNSWIndex(entity.L2, 8, 32)))
	require.NoError(t, err)
	require.NoError(t, it.Await(ctx))
	lt, err := c.LoadCollection(ctx, milvusclient.NewLoadCollectionOption(coll))
	require.NoError(t, err)
	require.NoError(t, lt.Await(ctx))
	qs := []entity.Vector{entity.FloatVector(ms[0].vec), entity.FloatVector(ms[1].vec)}
	_, err = c.Search(ctx, milvusclient.NewSearchOption(coll, 5, qs).WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	_, err = c.Query(ctx, milvusclient.NewQueryOption(coll).WithFilter("id < 10").WithConsistencyLevel(entity.ClStrong))
	require.NoError(t, err)
	_, err = c.Upsert(ctx, insertOption(coll, ms[:20]))
	require.NoError(t, err)
	dr, err := c.Delete(ctx, milvusclient.NewDeleteOption(coll).WithExpr("id < 5"))
	require.NoError(t, err)
	require.EqualValues(t, 5, dr.DeleteCount)
	_, err = c.DescribeCollection(ctx, milvusclient.NewDescribeCollectionOption("no_such_collection"))
	require.Error(t, err)
	// REST v2: a search counts like a gRPC one, under the REST path too.
	body := fmt.Sprintf(`{"collectionName":%q,"data":[%s],"limit":3}`, coll, vecJSON(ms[2].vec))
	resp, err := http.Post("http://"+s.addr+"/v2/vectordb/entities/search", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Sealed state reaches the query node's view once the flush handed off.
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = scrape(t, metricsAddr)
		v, _ := seriesValue(fams, "milvus_querynode_entity_num", map[string]string{"segment_state": "Sealed"})
		return v >= 300
	}, 20*time.Second, 200*time.Millisecond)

	for _, name := range milvusSeries {
		_, ok := fams[name]
		require.True(t, ok, "series %s is not exported", name)
	}
	db := map[string]string{"db_name": "default", "collection_name": coll}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{"node_id": "1"}
		for k, v := range db {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	v, _ := seriesValue(fams, "milvus_proxy_req_count", with(map[string]string{"function_name": "Search", "status": "success"}))
	require.EqualValues(t, 2, v, "one gRPC and one REST search")
	v, _ = seriesValue(fams, "milvus_proxy_req_count", map[string]string{
		"function_name": "DescribeCollection",
		"status":        "fail", "collection_name": "no_such_collection",
	})
	require.EqualValues(t, 1, v)
	v, _ = seriesValue(fams, "milvus_proxy_insert_vectors_count", with(nil))
	require.EqualValues(t, 300, v)
	v, _ = seriesValue(fams, "milvus_proxy_upsert_vectors_count", with(nil))
	require.EqualValues(t, 20, v)
	v, _ = seriesValue(fams, "milvus_proxy_delete_vectors_count", with(nil))
	require.EqualValues(t, 5, v)
	v, _ = seriesValue(fams, "milvus_proxy_search_vectors_count", with(nil))
	require.EqualValues(t, 3, v, "nq 2 over gRPC, 1 over REST")
	v, _ = seriesValue(fams, "milvus_proxy_sq_latency", with(map[string]string{"query_type": "search"}))
	require.EqualValues(t, 2, v)
	v, _ = seriesValue(fams, "milvus_proxy_mutation_latency", with(map[string]string{"msg_type": "insert"}))
	require.EqualValues(t, 1, v)
	v, _ = seriesValue(fams, "milvus_proxy_restful_api_req_count", map[string]string{"path": "/v2/vectordb/entities/search"})
	require.EqualValues(t, 1, v)
	v, _ = seriesValue(fams, "milvus_rootcoord_ddl_req_count", map[string]string{"function_name": "CreateCollection", "status": "success"})
	require.EqualValues(t, 1, v)
	v, _ = seriesValue(fams, "milvus_rootcoord_collection_num", map[string]string{"db_name": "default"})
	require.EqualValues(t, 1, v)
	v, _ = seriesValue(fams, "milvus_datacoord_stored_rows_num", map[string]string{"segment_state": "Flushed"})
	require.EqualValues(t, 300, v)
	v, _ = seriesValue(fams, "milvus_datacoord_index_task_count", map[string]string{"index_task_status": "finished"})
	require.GreaterOrEqual(t, v, 1.0)
	v, _ = seriesValue(fams, "milvus_datanode_flushed_data_rows", map[string]string{"data_source": "streaming"})
	require.GreaterOrEqual(t, v, 300.0)
	v, _ = seriesValue(fams, "milvus_datanode_flush_buffer_op_count", map[string]string{"status": "success", "segment_level": "L1"})
	require.GreaterOrEqual(t, v, 1.0)
	v, _ = seriesValue(fams, "milvus_indexnode_index_task_count", map[string]string{"status": "success"})
	require.GreaterOrEqual(t, v, 1.0)
	v, _ = seriesValue(fams, "milvus_querynode_sq_req_count", map[string]string{"query_type": "search", "status": "success"})
	require.EqualValues(t, 2, v)
	v, _ = seriesValue(fams, "milvus_querynode_collection_num", map[string]string{"node_id": "1"})
	require.EqualValues(t, 1, v)

	// The published dashboard's selectors on the claimed series select data.
	claimed := map[string]bool{}
	for _, n := range milvusSeries {
		claimed[n] = true
	}
	checked := map[string]bool{}
	for _, sel := range dashboardSelectors(t) {
		f, ok := family(fams, sel.name)
		if !ok || !claimed[f.GetName()] {
			continue
		}
		if notApplicable(sel) {
			continue
		}
		checked[f.GetName()] = true
		assert.True(t, selects(f, sel), "dashboard selector %s %v selects no series", sel.name, sel.matchers)
	}
	require.GreaterOrEqual(t, len(checked), 30, "dashboard series checked: %v", checked)
}

// notApplicable reports whether a selector asks for something Strata does
// not have: stats jobs (Strata does not re-sort segments after flush; see
// docs/ops/metrics.md).
func notApplicable(s selector) bool {
	for _, m := range s.matchers {
		if m.label == "task_type" && m.op == "=" && m.value == "JobTypeStatsJob" {
			return true
		}
	}
	return false
}

func vecJSON(v []float32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
