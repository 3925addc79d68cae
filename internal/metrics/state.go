package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
)

// Collections lists every collection (the root coordinator).
type Collections interface {
	AllCollections(ctx context.Context) ([]*catalog.Collection, error)
}

// DataView is the data coordinator's state as the scrape reads it.
type DataView interface {
	Segments(collectionID int64) []catalog.SegmentInfo
	IndexTasks(collectionID int64) []catalog.IndexTask
	Checkpoint(vchannel string) (catalog.ChannelCheckpoint, bool)
}

// QueryView is the query node's state as the scrape reads it (the
// in-process query node or query coordinator; a collection whose state
// cannot be read is left out of the scrape).
type QueryView interface {
	Loaded(ctx context.Context, collectionID int64) (bool, []int64, error)
	Segments(ctx context.Context, collectionID int64) ([]plan.SegmentInfo, error)
	// ServiceTimes is the timestamp (hybrid) through which each served
	// vchannel is readable.
	ServiceTimes() map[string]uint64
}

// CompactionView counts the data coordinator's compaction plans by type and state.
type CompactionView interface {
	CompactionCounts() map[[2]string]int
}

// WALEnds reports the end offset of a pchannel.
type WALEnds interface {
	End(ctx context.Context, pchannel string) (int64, error)
}

// State is what StateCollector reads; every field but Collections may be nil.
type State struct {
	Collections Collections
	Data        DataView
	Query       QueryView
	Compactions CompactionView
	WAL         WALEnds
	// Now is the clock of the lag series (time.Now when nil).
	Now func() time.Time
}

// StateCollector computes the state series at each scrape.
type StateCollector struct {
	st    State
	descs map[string]*prometheus.Desc
}

// stateSeries are the state series: name → help and labels.
var stateSeries = []struct {
	name, help string
	labels     []string
}{
	{"milvus_num_node", "number of nodes and coordinates", []string{nodeIDLabel, roleLabel}},
	{"milvus_rootcoord_collection_num", "number of collections", []string{databaseLabel}},
	{"milvus_rootcoord_partition_num", "number of partitions", nil},
	{"milvus_rootcoord_proxy_num", "number of proxy nodes managered by rootcoord", nil},
	{"milvus_rootcoord_dml_channel_num", "number of DML channels", nil},
	{
		"milvus_rootcoord_entity_num", "number of entities, clustered by collection and their status(loaded/total)",
		[]string{databaseLabel, collectionLabel, statusLabel},
	},
	{"milvus_datacoord_datanode_num", "number of data nodes", nil},
	{"milvus_datacoord_collection_num", "number of collections", nil},
	{
		"milvus_datacoord_segment_num", "number of segments",
		[]string{segStateLabel, segLevelLabel, "segment_is_sorted"},
	},
	{
		"milvus_datacoord_stored_rows_num", "number of stored rows of healthy segment",
		[]string{databaseLabel, collectionIDLabel, segStateLabel},
	},
	{
		"milvus_datacoord_stored_binlog_size", "binlog size of healthy segments",
		[]string{databaseLabel, collectionIDLabel, segStateLabel},
	},
	{
		"milvus_datacoord_index_task_count", "number of index tasks of each type",
		[]string{collectionIDLabel, indexStatusLabel},
	},
	{"milvus_datacoord_task_count", "number of index tasks of each type", []string{taskTypeLabel, taskStateLabel}},
	{
		"milvus_datacoord_compaction_task_num", "Number of compaction tasks currently",
		[]string{nodeIDLabel, compactTypeLabel, statusLabel},
	},
	{
		"milvus_datacoord_channel_checkpoint_unix_seconds", "channel checkpoint timestamp in unix seconds",
		[]string{nodeIDLabel, channelLabel},
	},
	{
		"milvus_datacoord_consume_datanode_tt_lag_ms", "now time minus time travel per physical channel",
		[]string{nodeIDLabel, channelLabel},
	},
	{
		"milvus_datanode_consume_tt_lag_ms", "now time minus tt per physical channel",
		[]string{nodeIDLabel, msgTypeLabel, collectionIDLabel},
	},
	{"milvus_datanode_flowgraph_num", "number of flowgraphs", []string{nodeIDLabel}},
	{"milvus_querycoord_collection_num", "number of collections", nil},
	{"milvus_querycoord_querynode_num", "number of QueryNodes managered by QueryCoord", nil},
	{"milvus_querynode_collection_num", "number of collections loaded", []string{nodeIDLabel}},
	{"milvus_querynode_partition_num", "number of partitions loaded", []string{nodeIDLabel}},
	{"milvus_querynode_dml_vchannel_num", "number of dmlChannels watched", []string{nodeIDLabel}},
	{"milvus_querynode_flowgraph_num", "number of flowgraphs", []string{nodeIDLabel}},
	{
		"milvus_querynode_segment_num", "number of segments loaded, clustered by its collection, partition, state and # of indexed fields",
		[]string{nodeIDLabel, collectionIDLabel, segStateLabel, segLevelLabel},
	},
	{
		"milvus_querynode_entity_num", "number of entities which can be searched/queried, clustered by collection, partition and state",
		[]string{databaseLabel, nodeIDLabel, collectionIDLabel, segStateLabel},
	},
	{
		"milvus_querynode_consume_tt_lag_ms", "now time minus tt per physical channel",
		[]string{nodeIDLabel, msgTypeLabel, collectionIDLabel},
	},
	{
		"strata_wal_checkpoint_lag_messages", "WAL records of a vchannel's pchannel past its data node checkpoint (not yet in object storage)",
		[]string{channelLabel},
	},
}

// NewStateCollector returns a collector of the state series over st.
func NewStateCollector(st State) *StateCollector {
	c := &StateCollector{st: st, descs: map[string]*prometheus.Desc{}}
	for _, s := range stateSeries {
		c.descs[s.name] = prometheus.NewDesc(s.name, s.help, s.labels, nil)
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *StateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// gauges accumulates the values of one series by label values.
type gauges map[string]map[[6]string]float64

func (g gauges) add(name string, v float64, labels ...string) {
	g.update(name, labels, func(old float64) float64 { return old + v })
}

// setMax keeps the largest value of a label set (the lag of a collection
// is its most lagging vchannel's).
func (g gauges) setMax(name string, v float64, labels ...string) {
	g.update(name, labels, func(old float64) float64 { return max(old, v) })
}

func (g gauges) update(name string, labels []string, f func(float64) float64) {
	m := g[name]
	if m == nil {
		m = map[[6]string]float64{}
		g[name] = m
	}
	var k [6]string
	copy(k[:], labels)
	m[k] = f(m[k])
}

// Collect implements prometheus.Collector.
func (c *StateCollector) Collect(ch chan<- prometheus.Metric) {
	g := gauges{}
	c.gather(g)
	for _, s := range stateSeries {
		for k, v := range g[s.name] {
			ch <- prometheus.MustNewConstMetric(c.descs[s.name], prometheus.GaugeValue, v, k[:len(s.labels)]...)
		}
	}
}

// physicalMillis is the wall-clock part of a hybrid timestamp (unix ms).
func physicalMillis(ts uint64) int64 { return int64(ts >> 18) }

// SegmentLevel is the Milvus segment_level label of a level.
func SegmentLevel(l catalog.SegmentLevel) string { return "L" + strconv.Itoa(int(l)) }

func (c *StateCollector) gather(g gauges) {
	now := time.Now()
	if c.st.Now != nil {
		now = c.st.Now()
	}
	for _, role := range []string{"proxy", "rootcoord", "datacoord", "querycoord", "datanode", "querynode"} {
		g.add("milvus_num_node", 1, NodeID, role)
	}
	for _, n := range []string{"milvus_rootcoord_proxy_num", "milvus_datacoord_datanode_num", "milvus_querycoord_querynode_num"} {
		g.add(n, 1)
	}
	if c.st.Compactions != nil {
		for k, n := range c.st.Compactions.CompactionCounts() {
			g.add("milvus_datacoord_compaction_task_num", float64(n), NodeID, k[0], k[1])
		}
	}
	if c.st.Collections == nil {
		return
	}
	cols, err := c.st.Collections.AllCollections(context.Background())
	if err != nil {
		return // no collection gauges rather than wrong ones
	}
	g.add("milvus_rootcoord_partition_num", 0)
	g.add("milvus_rootcoord_dml_channel_num", 0)
	g.add("milvus_datacoord_collection_num", float64(len(cols)))
	g.add("milvus_querycoord_collection_num", 0)
	g.add("milvus_querynode_collection_num", 0, NodeID)
	g.add("milvus_querynode_partition_num", 0, NodeID)
	g.add("milvus_querynode_dml_vchannel_num", 0, NodeID)
	g.add("milvus_querynode_flowgraph_num", 0, NodeID)
	g.add("milvus_datanode_flowgraph_num", 0, NodeID)
	var serviceTimes map[string]uint64
	if c.st.Query != nil {
		serviceTimes = c.st.Query.ServiceTimes()
	}
	ends := map[string]int64{}
	for _, col := range cols {
		collID := strconv.FormatInt(col.ID, 10)
		g.add("milvus_rootcoord_collection_num", 1, col.DBName)
		g.add("milvus_rootcoord_partition_num", float64(len(col.Partitions)))
		g.add("milvus_rootcoord_dml_channel_num", float64(len(col.VChannels)))
		g.add("milvus_datanode_flowgraph_num", float64(len(col.VChannels)), NodeID)
		var stored int64
		if c.st.Data != nil {
			stored = c.gatherData(g, col, collID, now, ends)
		}
		g.add("milvus_rootcoord_entity_num", float64(stored), col.DBName, col.Name, "total")
		if c.st.Query != nil {
			c.gatherQuery(g, col, collID, now, serviceTimes)
		}
	}
}

func (c *StateCollector) gatherData(g gauges, col *catalog.Collection, collID string, now time.Time, ends map[string]int64) int64 {
	var stored int64
	for _, s := range c.st.Data.Segments(col.ID) {
		if s.State == catalog.SegmentDropped {
			continue
		}
		state, level := s.State.String(), SegmentLevel(s.Level)
		sorted := "unsorted"
		if s.IsSorted() {
			sorted = "sorted"
		}
		g.add("milvus_datacoord_segment_num", 1, state, level, sorted)
		if s.Level == catalog.LevelL0 {
			continue
		}
		g.add("milvus_datacoord_stored_rows_num", float64(s.NumRows), col.DBName, collID, state)
		var size int64
		for _, logs := range s.Binlogs {
			for _, b := range logs {
				size += b.Size
			}
		}
		g.add("milvus_datacoord_stored_binlog_size", float64(size), col.DBName, collID, state)
		if s.State == catalog.SegmentFlushed {
			stored += s.NumRows
		}
	}
	for _, t := range c.st.Data.IndexTasks(col.ID) {
		status, job := indexTaskLabels(t.State)
		g.add("milvus_datacoord_index_task_count", 1, collID, status)
		g.add("milvus_datacoord_task_count", 1, "JobTypeIndexJob", job)
	}
	for i, vc := range col.VChannels {
		cp, ok := c.st.Data.Checkpoint(vc)
		if !ok {
			continue
		}
		pms := physicalMillis(cp.Position.TimeTick)
		if pms > 0 {
			lag := float64(max(now.UnixMilli()-pms, 0))
			g.add("milvus_datacoord_channel_checkpoint_unix_seconds", float64(pms)/1000, NodeID, vc)
			g.add("milvus_datacoord_consume_datanode_tt_lag_ms", lag, NodeID, vc)
			g.setMax("milvus_datanode_consume_tt_lag_ms", lag, NodeID, AllLabel, collID)
		}
		if c.st.WAL != nil && i < len(col.PChannels) {
			end, ok := ends[col.PChannels[i]]
			if !ok {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				e, err := c.st.WAL.End(ctx, col.PChannels[i])
				cancel()
				if err != nil {
					e = -1
				}
				ends[col.PChannels[i]], end = e, e
			}
			if end >= 0 {
				g.add("strata_wal_checkpoint_lag_messages", float64(max(end-cp.Position.Offset, 0)), vc)
			}
		}
	}
	return stored
}

func (c *StateCollector) gatherQuery(g gauges, col *catalog.Collection, collID string, now time.Time, serviceTimes map[string]uint64) {
	ctx := context.Background()
	loaded, parts, err := c.st.Query.Loaded(ctx, col.ID)
	if err != nil || !loaded {
		return
	}
	segs, err := c.st.Query.Segments(ctx, col.ID)
	if err != nil {
		return
	}
	g.add("milvus_querycoord_collection_num", 1)
	g.add("milvus_querynode_collection_num", 1, NodeID)
	np := len(parts)
	if parts == nil {
		np = len(col.Partitions)
	}
	g.add("milvus_querynode_partition_num", float64(np), NodeID)
	g.add("milvus_querynode_dml_vchannel_num", float64(len(col.VChannels)), NodeID)
	g.add("milvus_querynode_flowgraph_num", float64(len(col.VChannels)), NodeID)
	var rows int64
	for _, s := range segs {
		state := "Sealed"
		if s.Growing {
			state = "Growing"
		}
		g.add("milvus_querynode_segment_num", 1, NodeID, collID, state, SegmentLevel(catalog.SegmentLevel(s.Level)))
		if catalog.SegmentLevel(s.Level) != catalog.LevelL0 {
			g.add("milvus_querynode_entity_num", float64(s.Rows), col.DBName, NodeID, collID, state)
			rows += s.Rows
		}
	}
	g.add("milvus_rootcoord_entity_num", float64(rows), col.DBName, col.Name, "loaded")
	for _, vc := range col.VChannels {
		if ts, ok := serviceTimes[vc]; ok && ts > 0 {
			g.setMax("milvus_querynode_consume_tt_lag_ms", float64(max(now.UnixMilli()-physicalMillis(ts), 0)),
				NodeID, InsertLabel, collID)
		}
	}
}

// indexTaskLabels are the index_task_status (Milvus datacoord) and the
// task_state (JobState) labels of an index task state.
func indexTaskLabels(s catalog.IndexTaskState) (status, job string) {
	switch s {
	case catalog.IndexUnissued:
		return "unissued", "JobStateInit"
	case catalog.IndexInProgress:
		return "in-progress", "JobStateInProgress"
	case catalog.IndexFinished:
		return "finished", "JobStateFinished"
	case catalog.IndexFailed:
		return "failed", "JobStateFailed"
	}
	return "unissued", "JobStateNone"
}
