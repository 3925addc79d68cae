// Package console serves Strata's built-in web console, /console on the
// metrics port: plain server-rendered HTML (html/template, no script, no
// separate install) over the same Milvus API that clients use.
//
// Pages:
//
//   - /console — the server (version, uptime), the collections of every
//     database with their load state and rows, the channels' consumer lag,
//     and plots of the main metrics over the last hour.
//   - /console/collection?db=D&name=C — one collection: schema, indexes
//     with build progress, segments (state, level, rows, sorted), load
//     progress, and a playground: a query (filter, output fields, limit) or
//     a search (a FloatVector as JSON) whose rows are shown in a table.
//
// Reads go through the service the gRPC and REST APIs serve (svc, the
// guarded one when authorization is on), with the browser's HTTP
// credentials passed on as the SDKs send them, so the console shows what
// that user may see and nothing else; an unauthenticated request to a
// server with authorization on gets 401 with a Basic challenge. The
// playground runs through the REST handler in-process, so its requests
// are validated and answered exactly as REST v2's.
package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/milvus-io/milvus-proto/go-api/v2/commonpb"
	"github.com/milvus-io/milvus-proto/go-api/v2/milvuspb"
	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-db/strata/internal/rest"
)

// Options configures a Console.
type Options struct {
	// Gatherer is the metrics registry the plots and channel lags read.
	Gatherer prometheus.Gatherer
	// REST is the REST v2 handler the playground calls in-process.
	REST http.Handler
	// Started is when the server started (shown as uptime).
	Started time.Time
	// Sample is the period of the metric plots (default 10 s); Window is
	// how far back they reach (default one hour).
	Sample, Window time.Duration
}

// Console is the web console's HTTP handler.
type Console struct {
	svc  milvuspb.MilvusServiceServer
	opts Options
	hist *history
}

// New returns a console over svc. Run must run for the plots to fill.
func New(svc milvuspb.MilvusServiceServer, opts Options) *Console {
	if opts.Sample <= 0 {
		opts.Sample = 10 * time.Second
	}
	if opts.Window <= 0 {
		opts.Window = time.Hour
	}
	return &Console{svc: svc, opts: opts, hist: newHistory(int(opts.Window / opts.Sample))}
}

// Run samples the plotted metrics every Options.Sample until ctx ends.
func (c *Console) Run(ctx context.Context) error {
	if c.opts.Gatherer == nil {
		return nil
	}
	t := time.NewTicker(c.opts.Sample)
	defer t.Stop()
	c.hist.sample(c.opts.Gatherer, time.Now())
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			c.hist.sample(c.opts.Gatherer, now)
		}
	}
}

// ServeHTTP serves the console's pages.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	auth := r.Header.Get("Authorization")
	var (
		page any
		name string
		err  error
	)
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/console":
		name = "overview"
		page, err = c.overview(ctx, auth)
	case "/console/collection":
		name = "collection"
		page, err = c.collection(ctx, r, auth)
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		if st, ok := status.FromError(err); ok && (st.Code() == codes.Unauthenticated || st.Code() == codes.PermissionDenied) {
			w.Header().Set("WWW-Authenticate", `Basic realm="strata console"`)
			http.Error(w, st.Message(), http.StatusUnauthorized)
			return
		}
		var se *serviceError
		if errors.As(err, &se) && (se.code == 1800 || se.code == 1400) {
			w.Header().Set("WWW-Authenticate", `Basic realm="strata console"`)
			http.Error(w, se.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		page, name = errorPage{Err: err.Error()}, "error"
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, page); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// serviceError is a non-success status from the service.
type serviceError struct {
	code int32
	msg  string
}

func (e *serviceError) Error() string { return fmt.Sprintf("%s (code %d)", e.msg, e.code) }

// check turns a response status and call error into one error.
func check(st *commonpb.Status, err error) error {
	if err != nil {
		return err
	}
	if st.GetCode() != 0 || (st.GetErrorCode() != commonpb.ErrorCode_Success && st.GetErrorCode() != 0) {
		return &serviceError{code: st.GetCode(), msg: st.GetReason()}
	}
	return nil
}

// collectionRow is one collection on the overview.
type collectionRow struct {
	DB, Name, LoadState string
	ID, Rows            int64
	Shards              int32
}

// channelRow is one vchannel's consumer lag on the overview.
type channelRow struct {
	Name  string
	LagMS float64
}

type overviewPage struct {
	Version, Uptime string
	Collections     []collectionRow
	Channels        []channelRow
	Plots           []plot
}

func (c *Console) overview(ctx context.Context, auth string) (*overviewPage, error) {
	p := &overviewPage{}
	if v, err := c.svc.GetVersion(ctx, &milvuspb.GetVersionRequest{}); err == nil {
		p.Version = v.GetVersion()
	}
	if !c.opts.Started.IsZero() {
		p.Uptime = time.Since(c.opts.Started).Round(time.Second).String()
	}
	dbs, err := c.svc.ListDatabases(rest.WithMetadata(ctx, auth, "default"), &milvuspb.ListDatabasesRequest{})
	if err := check(dbs.GetStatus(), err); err != nil {
		return nil, err
	}
	for _, db := range dbs.GetDbNames() {
		dctx := rest.WithMetadata(ctx, auth, db)
		cols, err := c.svc.ShowCollections(dctx, &milvuspb.ShowCollectionsRequest{DbName: db})
		if err := check(cols.GetStatus(), err); err != nil {
			return nil, err
		}
		for i, name := range cols.GetCollectionNames() {
			row := collectionRow{DB: db, Name: name}
			if i < len(cols.GetCollectionIds()) {
				row.ID = cols.GetCollectionIds()[i]
			}
			if d, err := c.svc.DescribeCollection(dctx, &milvuspb.DescribeCollectionRequest{DbName: db, CollectionName: name}); check(d.GetStatus(), err) == nil {
				row.Shards = d.GetShardsNum()
			}
			row.LoadState = loadState(dctx, c.svc, db, name)
			row.Rows = rowCount(dctx, c.svc, db, name)
			p.Collections = append(p.Collections, row)
		}
	}
	if c.opts.Gatherer != nil {
		p.Channels = channelLags(c.opts.Gatherer)
	}
	p.Plots = c.hist.plots()
	return p, nil
}

func loadState(ctx context.Context, svc milvuspb.MilvusServiceServer, db, name string) string {
	st, err := svc.GetLoadState(ctx, &milvuspb.GetLoadStateRequest{DbName: db, CollectionName: name})
	if check(st.GetStatus(), err) != nil {
		return "?"
	}
	return strings.TrimPrefix(st.GetState().String(), "LoadState")
}

func rowCount(ctx context.Context, svc milvuspb.MilvusServiceServer, db, name string) int64 {
	st, err := svc.GetCollectionStatistics(ctx, &milvuspb.GetCollectionStatisticsRequest{DbName: db, CollectionName: name})
	if check(st.GetStatus(), err) != nil {
		return -1
	}
	for _, kv := range st.GetStats() {
		if kv.GetKey() == "row_count" {
			n, _ := strconv.ParseInt(kv.GetValue(), 10, 64)
			return n
		}
	}
	return 0
}

// channelLags reads milvus_datacoord_consume_datanode_tt_lag_ms per channel.
func channelLags(g prometheus.Gatherer) []channelRow {
	mfs, err := g.Gather()
	if err != nil {
		return nil
	}
	var out []channelRow
	for _, mf := range mfs {
		if mf.GetName() != "milvus_datacoord_consume_datanode_tt_lag_ms" {
			continue
		}
		for _, m := range mf.GetMetric() {
			row := channelRow{LagMS: m.GetGauge().GetValue()}
			for _, l := range m.GetLabel() {
				if l.GetName() == "channel_name" {
					row.Name = l.GetValue()
				}
			}
			out = append(out, row)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type fieldRow struct {
	ID                              int64
	Name, Type, Params, Flags, Desc string
}

type indexRow struct {
	Name, Field, Type, Metric, State, Reason string
	Indexed, Total, Pending                  int64
}

type segmentRow struct {
	ID, Partition, Rows int64
	State, Level        string
	Sorted, Served      bool
}

type collectionPage struct {
	DB, Name, Description, LoadState string
	ID, Rows                         int64
	LoadProgress                     int64
	Fields                           []fieldRow
	Indexes                          []indexRow
	Segments                         []segmentRow
	VChannels                        []string
	Play                             playground
}

func (c *Console) collection(ctx context.Context, r *http.Request, auth string) (*collectionPage, error) {
	q := r.URL.Query()
	db, name := q.Get("db"), q.Get("name")
	if db == "" {
		db = "default"
	}
	ctx = rest.WithMetadata(ctx, auth, db)
	d, err := c.svc.DescribeCollection(ctx, &milvuspb.DescribeCollectionRequest{DbName: db, CollectionName: name})
	if err := check(d.GetStatus(), err); err != nil {
		return nil, err
	}
	p := &collectionPage{
		DB: db, Name: name, ID: d.GetCollectionID(), Description: d.GetSchema().GetDescription(),
		VChannels: d.GetVirtualChannelNames(), LoadState: loadState(ctx, c.svc, db, name),
		Rows: rowCount(ctx, c.svc, db, name),
	}
	for _, f := range d.GetSchema().GetFields() {
		p.Fields = append(p.Fields, describeField(f))
	}
	for _, sa := range d.GetSchema().GetStructArrayFields() {
		for _, f := range sa.GetFields() {
			row := describeField(f)
			row.Name = sa.GetName() + "[" + f.GetName() + "]"
			p.Fields = append(p.Fields, row)
		}
	}
	if lp, err := c.svc.GetLoadingProgress(ctx, &milvuspb.GetLoadingProgressRequest{DbName: db, CollectionName: name}); check(lp.GetStatus(), err) == nil {
		p.LoadProgress = lp.GetProgress()
	}
	if ix, err := c.svc.DescribeIndex(ctx, &milvuspb.DescribeIndexRequest{DbName: db, CollectionName: name}); check(ix.GetStatus(), err) == nil {
		for _, i := range ix.GetIndexDescriptions() {
			row := indexRow{
				Name: i.GetIndexName(), Field: i.GetFieldName(), State: strings.TrimPrefix(i.GetState().String(), "IndexState_"),
				Reason: i.GetIndexStateFailReason(), Indexed: i.GetIndexedRows(), Total: i.GetTotalRows(), Pending: i.GetPendingIndexRows(),
			}
			for _, kv := range i.GetParams() {
				switch kv.GetKey() {
				case "index_type":
					row.Type = kv.GetValue()
				case "metric_type":
					row.Metric = kv.GetValue()
				}
			}
			p.Indexes = append(p.Indexes, row)
		}
	}
	served := map[int64]bool{}
	if qs, err := c.svc.GetQuerySegmentInfo(ctx, &milvuspb.GetQuerySegmentInfoRequest{DbName: db, CollectionName: name}); check(qs.GetStatus(), err) == nil {
		for _, s := range qs.GetInfos() {
			served[s.GetSegmentID()] = true
		}
	}
	if ps, err := c.svc.GetPersistentSegmentInfo(ctx, &milvuspb.GetPersistentSegmentInfoRequest{DbName: db, CollectionName: name}); check(ps.GetStatus(), err) == nil {
		for _, s := range ps.GetInfos() {
			p.Segments = append(p.Segments, segmentRow{
				ID: s.GetSegmentID(), Partition: s.GetPartitionID(), Rows: s.GetNumRows(),
				State: s.GetState().String(), Level: s.GetLevel().String(), Sorted: s.GetIsSorted(), Served: served[s.GetSegmentID()],
			})
		}
		sort.Slice(p.Segments, func(i, j int) bool { return p.Segments[i].ID < p.Segments[j].ID })
	}
	p.Play = c.play(r, db, name, auth)
	return p, nil
}

func describeField(f *schemapb.FieldSchema) fieldRow {
	row := fieldRow{ID: f.GetFieldID(), Name: f.GetName(), Type: f.GetDataType().String(), Desc: f.GetDescription()}
	if f.GetDataType() == schemapb.DataType_Array || f.GetDataType() == schemapb.DataType_ArrayOfVector {
		row.Type += "<" + f.GetElementType().String() + ">"
	}
	var params []string
	for _, kv := range f.GetTypeParams() {
		params = append(params, kv.GetKey()+"="+kv.GetValue())
	}
	row.Params = strings.Join(params, ", ")
	var flags []string
	for _, fl := range []struct {
		on   bool
		name string
	}{
		{f.GetIsPrimaryKey(), "primary key"},
		{f.GetAutoID(), "auto id"},
		{f.GetNullable(), "nullable"},
		{f.GetIsPartitionKey(), "partition key"},
		{f.GetIsClusteringKey(), "clustering key"},
		{f.GetIsDynamic(), "dynamic"},
		{f.GetIsFunctionOutput(), "function output"},
		{f.GetDefaultValue() != nil, "default"},
	} {
		if fl.on {
			flags = append(flags, fl.name)
		}
	}
	row.Flags = strings.Join(flags, ", ")
	return row
}

// playground is the query/search form and its result.
type playground struct {
	Mode, Filter, Output, Vector, Anns string
	Limit                              int
	Ran                                bool
	Err                                string
	Columns                            []string
	Rows                               [][]string
}

// play runs the playground's request, if the form was sent (run=1),
// through the REST handler.
func (c *Console) play(r *http.Request, db, name, auth string) playground {
	q := r.URL.Query()
	pg := playground{Mode: q.Get("mode"), Filter: q.Get("filter"), Output: q.Get("output"), Vector: q.Get("vector"), Anns: q.Get("anns"), Limit: 10}
	if pg.Mode == "" {
		pg.Mode = "query"
	}
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		pg.Limit = n
	}
	if q.Get("run") == "" || c.opts.REST == nil {
		return pg
	}
	pg.Ran = true
	body := map[string]any{"dbName": db, "collectionName": name, "limit": pg.Limit, "consistencyLevel": "Strong"}
	if pg.Filter != "" {
		body["filter"] = pg.Filter
	}
	if out := splitList(pg.Output); len(out) > 0 {
		body["outputFields"] = out
	}
	path := "/v2/vectordb/entities/query"
	if pg.Mode == "search" {
		path = "/v2/vectordb/entities/search"
		var vec []float64
		if err := json.Unmarshal([]byte(pg.Vector), &vec); err != nil {
			pg.Err = "the search vector must be a JSON array of numbers: " + err.Error()
			return pg
		}
		body["data"] = [][]float64{vec}
		if pg.Anns != "" {
			body["annsField"] = pg.Anns
		}
	}
	b, _ := json.Marshal(body)
	req := httptest.NewRequestWithContext(r.Context(), http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	c.opts.REST.ServeHTTP(rec, req)
	var resp struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		pg.Err = fmt.Sprintf("REST answered %d: %s", rec.Code, rec.Body.String())
		return pg
	}
	if resp.Code != 0 {
		pg.Err = fmt.Sprintf("%s (code %d)", resp.Message, resp.Code)
		return pg
	}
	seen := map[string]bool{}
	for _, row := range resp.Data {
		for k := range row {
			if !seen[k] {
				seen[k] = true
				pg.Columns = append(pg.Columns, k)
			}
		}
	}
	sort.Slice(pg.Columns, func(i, j int) bool {
		return columnRank(pg.Columns[i]) < columnRank(pg.Columns[j]) || (columnRank(pg.Columns[i]) == columnRank(pg.Columns[j]) && pg.Columns[i] < pg.Columns[j])
	})
	for _, row := range resp.Data {
		cells := make([]string, len(pg.Columns))
		for i, k := range pg.Columns {
			cells[i] = cell(row[k])
		}
		pg.Rows = append(pg.Rows, cells)
	}
	return pg
}

// columnRank puts the id and distance columns first.
func columnRank(k string) int {
	switch k {
	case "id":
		return 0
	case "distance":
		return 1
	}
	return 2
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type errorPage struct{ Err string }

var pages = template.Must(template.New("console").Funcs(template.FuncMap{
	"pct": func(a, b int64) int64 {
		if b <= 0 {
			return 100
		}
		return a * 100 / b
	},
}).Parse(pageTemplates))
