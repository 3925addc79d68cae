package metrics

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProxyObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := NewProxy(reg)
	p.Observe(Request{Method: "Search", DB: "default", Collection: "c", Latency: 3 * time.Millisecond, NQ: 4})
	p.Observe(Request{Method: "Search", DB: "default", Collection: "c", Failed: true, NQ: 2})
	p.Observe(Request{Method: "Insert", DB: "default", Collection: "c", Latency: time.Millisecond, Rows: 10})
	p.Observe(Request{Method: "Delete", DB: "default", Collection: "c", Rows: 3, Slow: true})

	fams := gather(t, reg)
	l := func(kv ...string) map[string]string {
		m := map[string]string{"node_id": NodeID}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c := l("db_name", "default", "collection_name", "c")
	require.InDelta(t, 2, value(fams, "milvus_proxy_req_count", merge(c, l("function_name", "Search", "status", Total))), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_req_count", merge(c, l("function_name", "Search", "status", Success))), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_req_count", merge(c, l("function_name", "Search", "status", Fail))), 0)
	require.InDelta(t, 4, value(fams, "milvus_proxy_search_vectors_count", c), 0, "only successful searches count their vectors")
	require.InDelta(t, 6, value(fams, "milvus_proxy_received_nq", merge(c, l("query_type", SearchLabel))), 0)
	require.InDelta(t, 10, value(fams, "milvus_proxy_insert_vectors_count", c), 0)
	require.InDelta(t, 3, value(fams, "milvus_proxy_delete_vectors_count", c), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_slow_query_count", l("msg_type", DeleteLabel)), 0)
	require.InDelta(t, 1, value(fams, "milvus_proxy_sq_latency", c), 0, "failures are not timed")
	require.InDelta(t, 2, value(fams, "milvus_proxy_mutation_latency", c), 0)
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func gather(t *testing.T, g prometheus.Gatherer) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := g.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value sums the series of a family whose labels include want (a
// histogram counts its observations).
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var sum float64
next:
	for _, m := range fams[name].GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
	}
	return sum
}

// series renders a family's series as "{k=v,…} value" lines, sorted.
func series(fams map[string]*dto.MetricFamily, name string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		var ls []string
		for _, lp := range m.GetLabel() {
			ls = append(ls, lp.GetName()+"="+lp.GetValue())
		}
		out = append(out, "{"+strings.Join(ls, ",")+"} "+strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64))
	}
	sort.Strings(out)
	return out
}

type fakeColls []*catalog.Collection

func (f fakeColls) AllCollections(context.Context) ([]*catalog.Collection, error) { return f, nil }

type fakeData struct{}

func (fakeData) Segments(int64) []catalog.SegmentInfo {
	return []catalog.SegmentInfo{
		{
			ID: 1, State: catalog.SegmentFlushed, Level: catalog.LevelL1, NumRows: 100, Sorted: true,
			Binlogs: map[int64][]catalog.Binlog{100: {{Size: 7}}},
		},
		{ID: 2, State: catalog.SegmentGrowing, Level: catalog.LevelL1, NumRows: 5},
		{ID: 3, State: catalog.SegmentFlushed, Level: catalog.LevelL0},
		{ID: 4, State: catalog.SegmentDropped, Level: catalog.LevelL1, NumRows: 50},
	}
}

func (fakeData) IndexTasks(int64) []catalog.IndexTask {
	return []catalog.IndexTask{{State: catalog.IndexFinished}, {State: catalog.IndexInProgress}}
}

func (fakeData) Checkpoint(string) (catalog.ChannelCheckpoint, bool) {
	return catalog.ChannelCheckpoint{Position: catalog.Position{Offset: 40, TimeTick: uint64(9_000) << 18}}, true
}

type fakeQuery struct{}

func (fakeQuery) Loaded(context.Context, int64) (bool, []int64, error) { return true, nil, nil }
func (fakeQuery) Segments(context.Context, int64) ([]plan.SegmentInfo, error) {
	return []plan.SegmentInfo{{ID: 1, Rows: 100, Level: 1}, {ID: 2, Rows: 5, Growing: true, Level: 1}}, nil
}

func (fakeQuery) ServiceTimes() map[string]uint64 {
	return map[string]uint64{"v0": uint64(9_500) << 18}
}

type fakeWAL struct{}

func (fakeWAL) End(context.Context, string) (int64, error) { return 100, nil }

func TestStateCollector(t *testing.T) {
	col := &catalog.Collection{CollectionInfo: catalog.CollectionInfo{
		ID: 7, DBName: "default", Name: "c",
		VChannels: []string{"v0"}, PChannels: []string{"p0"}, Partitions: []catalog.PartitionInfo{{ID: 1}, {ID: 2}},
	}}
	c := NewStateCollector(State{
		Collections: fakeColls{col}, Data: fakeData{}, Query: fakeQuery{}, WAL: fakeWAL{},
		Now: func() time.Time { return time.UnixMilli(10_000) },
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	fams := gather(t, reg)
	for name, want := range map[string][]string{
		"milvus_datacoord_segment_num": {
			"{segment_is_sorted=sorted,segment_level=L0,segment_state=Flushed} 1",
			"{segment_is_sorted=sorted,segment_level=L1,segment_state=Flushed} 1",
			"{segment_is_sorted=unsorted,segment_level=L1,segment_state=Growing} 1",
		},
		"milvus_datacoord_stored_rows_num": {
			"{collection_id=7,db_name=default,segment_state=Flushed} 100",
			"{collection_id=7,db_name=default,segment_state=Growing} 5",
		},
		"milvus_datacoord_index_task_count": {
			"{collection_id=7,index_task_status=finished} 1",
			"{collection_id=7,index_task_status=in-progress} 1",
		},
		"milvus_datanode_consume_tt_lag_ms":  {"{collection_id=7,msg_type=all,node_id=1} 1000"},
		"milvus_querynode_consume_tt_lag_ms": {"{collection_id=7,msg_type=insert,node_id=1} 500"},
		"milvus_querynode_entity_num": {
			"{collection_id=7,db_name=default,node_id=1,segment_state=Growing} 5",
			"{collection_id=7,db_name=default,node_id=1,segment_state=Sealed} 100",
		},
		"milvus_querynode_partition_num":     {"{node_id=1} 2"},
		"milvus_rootcoord_collection_num":    {"{db_name=default} 1"},
		"strata_wal_checkpoint_lag_messages": {"{channel_name=v0} 60"},
	} {
		require.Equal(t, want, series(fams, name), name)
	}
}
