package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// restPrefix is the prefix of the REST v2 routes (rest.PathPrefix).
const restPrefix = "/v2/vectordb/"

// restMethods names the gRPC method each REST v2 route performs, so that
// REST traffic counts in milvus_proxy_req_count under the same
// function_name as gRPC traffic (Milvus's REST handlers call the proxy's
// methods, which count themselves).
var restMethods = map[string]string{
	"collections/list": "ShowCollections", "collections/has": "HasCollection",
	"collections/describe": "DescribeCollection", "collections/get_stats": "GetCollectionStatistics",
	"collections/get_load_state": "GetLoadState", "collections/create": "CreateCollection",
	"collections/drop": "DropCollection", "collections/load": "LoadCollection",
	"collections/release": "ReleaseCollection", "collections/flush": "Flush",
	"collections/rename": "RenameCollection", "collections/alter_properties": "AlterCollection",
	"collections/drop_properties": "AlterCollection", "collections/compact": "ManualCompaction",
	"partitions/list": "ShowPartitions", "partitions/has": "HasPartition",
	"partitions/get_stats": "GetPartitionStatistics", "partitions/create": "CreatePartition",
	"partitions/drop": "DropPartition", "partitions/load": "LoadPartitions",
	"partitions/release": "ReleasePartitions",
	"indexes/list":       "DescribeIndex", "indexes/describe": "DescribeIndex", "indexes/create": "CreateIndex",
	"indexes/drop": "DropIndex", "indexes/alter_properties": "AlterIndex", "indexes/drop_properties": "AlterIndex",
	"aliases/list": "ListAliases", "aliases/describe": "DescribeAlias", "aliases/create": "CreateAlias",
	"aliases/drop": "DropAlias", "aliases/alter": "AlterAlias",
	"databases/list": "ListDatabases", "databases/create": "CreateDatabase", "databases/drop": "DropDatabase",
	"databases/describe": "DescribeDatabase", "databases/alter": "AlterDatabase",
	"databases/alter_properties": "AlterDatabase", "databases/drop_properties": "AlterDatabase",
	"entities/insert": "Insert", "entities/upsert": "Upsert", "entities/delete": "Delete",
	"entities/query": "Query", "entities/get": "Query", "entities/search": "Search",
	"entities/hybrid_search": "HybridSearch", "entities/advanced_search": "HybridSearch",
}

// restNames are the database and collection a REST request body names.
type restNames struct {
	DBName         string `json:"dbName"`
	CollectionName string `json:"collectionName"`
}

// restHead is what the observer reads from a search request body.
type restHead struct {
	restNames
	Data   []json.RawMessage `json:"data"`
	Search []json.RawMessage `json:"search"`
}

// maxRESTBody is the REST handler's body limit (rest.maxBodyBytes).
const maxRESTBody = 256 << 20

// restPrefixBytes is how much of a response the observer keeps: enough for
// the envelope's code and an error message (the body's keys are sorted, so
// "code" and the write counts come first).
const restPrefixBytes = 4096

// RESTHandler wraps the REST v2 handler so that its requests are counted
// (milvus_proxy_restful_api_*, and milvus_proxy_req_count under the route's
// gRPC method) and logged like gRPC requests.
func (o *Observer) RESTHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, isREST := strings.CutPrefix(r.URL.Path, restPrefix)
		method, known := restMethods[route]
		if !isREST || !known || r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		// One byte past the REST handler's limit, so that it still refuses a larger body.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRESTBody+1))
		if err != nil {
			h.ServeHTTP(w, r) // the handler reports the read error
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var head restHead
		if method == "Search" || method == "HybridSearch" {
			_ = json.Unmarshal(body, &head) // a malformed body fails in the handler and is logged below
		} else {
			// Only the names: a write's rows are not copied out of the body.
			_ = json.Unmarshal(body, &head.restNames)
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		c := call{method: method, db: head.DBName, collection: head.CollectionName, latency: time.Since(start)}
		if c.db == "" {
			c.db = r.Header.Get("DB-Name")
		}
		if c.db == "" {
			c.db = "default"
		}
		switch method {
		case "Search":
			c.nq = int64(len(head.Data))
		case "HybridSearch":
			if len(head.Search) > 0 {
				var sub restHead
				_ = json.Unmarshal(head.Search[0], &sub)
				c.nq = int64(len(sub.Data))
			}
		}
		code, rows, message := restOutcome(rec.prefix.Bytes())
		if rec.status >= 400 || code != 0 {
			c.failed, c.code, c.reason = true, code, message
		}
		c.rows = rows
		o.m.Proxy.ObserveREST(r.URL.Path, c.latency)
		o.finish(c)
	})
}

var (
	restCodeRe  = regexp.MustCompile(`^\{"code":(-?\d+)`)
	restCountRe = regexp.MustCompile(`"(?:insert|upsert|delete)Count":(\d+)`)
)

// restOutcome reads the envelope's code, the write count and the error
// message from the first bytes of a response. The keys of the envelope are
// sorted ("code" first, then "data"), so a body cut off after the prefix
// still gives them; error bodies are small and decode whole.
func restOutcome(prefix []byte) (code int32, rows int64, message string) {
	if m := restCodeRe.FindSubmatch(prefix); m != nil {
		c, _ := strconv.ParseInt(string(m[1]), 10, 32)
		code = int32(c)
	}
	if m := restCountRe.FindSubmatch(prefix); m != nil {
		rows, _ = strconv.ParseInt(string(m[1]), 10, 64)
	}
	if code != 0 {
		var env struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(prefix, &env)
		message = env.Message
	}
	return code, rows, message
}

// recorder keeps the status and the first bytes of a response.
type recorder struct {
	http.ResponseWriter
	status int
	prefix bytes.Buffer
}

// WriteHeader implements http.ResponseWriter.
func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *recorder) Write(b []byte) (int, error) {
	if n := restPrefixBytes - r.prefix.Len(); n > 0 {
		r.prefix.Write(b[:min(n, len(b))])
	}
	return r.ResponseWriter.Write(b)
}
