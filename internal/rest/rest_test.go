package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/strata-db/strata/internal/app"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// startServer runs a standalone server on a free port and returns its base URL.
func startServer(t testing.TB) string {
	t.Helper()
	cfg := app.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Addr = "127.0.0.1:0"
	cfg.MetricsAddr = ""
	srv, err := app.Listen(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("server did not stop")
		}
	})
	return "http://" + srv.Addr()
}

// reply is the REST envelope.
type reply struct {
	Code    int32           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Topks   []int64         `json:"topks"`
}

type client struct {
	t       testing.TB
	base    string
	headers map[string]string
}

func (c *client) raw(path, body string) reply {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+"/v2/vectordb/"+path, bytes.NewBufferString(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode, path)
	var r reply
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&r))
	return r
}

// call posts body (marshalled) and requires success.
func (c *client) call(path string, body any) reply {
	c.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(c.t, err)
	r := c.raw(path, string(b))
	require.Equal(c.t, int32(0), r.Code, "%s: %s", path, r.Message)
	return r
}

// fail posts body and returns the error code.
func (c *client) fail(path string, body any) reply {
	c.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(c.t, err)
	r := c.raw(path, string(b))
	require.NotEqual(c.t, int32(0), r.Code, "%s should fail", path)
	require.NotEmpty(c.t, r.Message)
	return r
}

func decode[T any](t testing.TB, r reply) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.Data, &v))
	return v
}

type m = map[string]any

func TestQuickCollectionFlow(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	c.call("collections/create", m{"collectionName": "quick", "dimension": 4, "metricType": "L2"})

	require.Equal(t, []string{"quick"}, decode[[]string](t, c.call("collections/list", m{})))
	require.Equal(t, m{"has": true}, decode[m](t, c.call("collections/has", m{"collectionName": "quick"})))
	require.Equal(t, m{"has": false}, decode[m](t, c.call("collections/has", m{"collectionName": "nope"})))
	desc := decode[m](t, c.call("collections/describe", m{"collectionName": "quick"}))
	require.Equal(t, "quick", desc["collectionName"])
	require.Equal(t, true, desc["enableDynamicField"])
	require.Equal(t, "LoadStateLoaded", desc["load"])
	require.Equal(t, "Bounded", desc["consistencyLevel"])
	fields := desc["fields"].([]any)
	require.Len(t, fields, 2)
	require.Equal(t, "Int64", fields[0].(m)["type"])
	require.Equal(t, true, fields[0].(m)["primaryKey"])
	require.Equal(t, "FloatVector", fields[1].(m)["type"])
	idx := desc["indexes"].([]any)
	require.Len(t, idx, 1)
	require.Equal(t, "L2", idx[0].(m)["metricType"])
	require.Equal(t, m{"loadState": "LoadStateLoaded", "loadProgress": float64(100)},
		decode[m](t, c.call("collections/get_load_state", m{"collectionName": "quick"})))

	rows := []m{
		{"id": 1, "vector": []float32{1, 0, 0, 0}, "color": "red"},
		{"id": "2", "vector": []float32{0, 1, 0, 0}, "color": "blue"},
		{"id": 3, "vector": []float32{0, 0, 1, 0}, "color": "red", "n": 7},
	}
	ins := decode[m](t, c.call("entities/insert", m{"collectionName": "quick", "data": rows}))
	require.Equal(t, float64(3), ins["insertCount"])
	require.Equal(t, []any{"1", "2", "3"}, ins["insertIds"], "int64 ids are strings by default")

	q := decode[[]m](t, c.call("entities/query", m{
		"collectionName": "quick", "filter": `color == "red"`,
		"outputFields": []string{"id", "color"}, "consistencyLevel": "Strong",
	}))
	require.ElementsMatch(t, []m{{"id": "1", "color": "red"}, {"id": "3", "color": "red"}}, q)

	got := decode[[]m](t, c.call("entities/get", m{"collectionName": "quick", "id": []int{3}}))
	require.Len(t, got, 1)
	require.Equal(t, "3", got[0]["id"])
	require.Equal(t, float64(7), got[0]["n"], "dynamic keys are merged into the row")
	require.Equal(t, []any{float64(0), float64(0), float64(1), float64(0)}, got[0]["vector"])

	s := c.call("entities/search", m{
		"collectionName": "quick", "data": [][]float32{{1, 0, 0, 0}, {0, 0, 1, 0}},
		"limit": 2, "outputFields": []string{"color"}, "consistencyLevel": "Strong",
	})
	require.Equal(t, []int64{2, 2}, s.Topks)
	hits := decode[[]m](t, s)
	require.Len(t, hits, 4)
	require.Equal(t, "1", hits[0]["id"])
	require.Equal(t, float64(0), hits[0]["distance"])
	require.Equal(t, "red", hits[0]["color"])
	require.Equal(t, "3", hits[2]["id"])

	filtered := decode[[]m](t, c.call("entities/search", m{
		"collectionName": "quick", "data": [][]float32{{1, 0, 0, 0}},
		"filter": `color == "blue"`, "consistencyLevel": "Strong",
	}))
	require.Len(t, filtered, 1)
	require.Equal(t, "2", filtered[0]["id"])

	up := decode[m](t, c.call("entities/upsert", m{
		"collectionName": "quick",
		"data":           []m{{"id": 2, "vector": []float32{0, 1, 0, 0}, "color": "green"}},
	}))
	require.Equal(t, float64(1), up["upsertCount"])
	got = decode[[]m](t, c.call("entities/get", m{
		"collectionName": "quick", "id": 2, "outputFields": []string{"color"},
		"consistencyLevel": "Strong",
	}))
	require.Equal(t, []m{{"id": "2", "color": "green"}}, got)

	c.call("entities/delete", m{"collectionName": "quick", "filter": "id in [1]"})
	c.call("entities/delete", m{"collectionName": "quick", "id": []int{3}})
	cnt := decode[[]m](t, c.call("entities/query", m{
		"collectionName": "quick", "outputFields": []string{"count(*)"},
		"consistencyLevel": "Strong",
	}))
	require.Equal(t, []m{{"count(*)": "1"}}, cnt)

	c.call("collections/flush", m{"collectionName": "quick"})
	stats := decode[m](t, c.call("collections/get_stats", m{"collectionName": "quick"}))
	require.Contains(t, stats, "rowCount")

	c.call("collections/release", m{"collectionName": "quick"})
	require.Equal(t, m{"loadState": "LoadStateNotLoad"},
		decode[m](t, c.call("collections/get_load_state", m{"collectionName": "quick"})))
	c.fail("entities/query", m{"collectionName": "quick", "filter": "id > 0"})
	c.call("collections/load", m{"collectionName": "quick"})
	c.call("collections/rename", m{"collectionName": "quick", "newCollectionName": "renamed"})
	require.Equal(t, []string{"renamed"}, decode[[]string](t, c.call("collections/list", m{})))
	require.Len(t, decode[[]m](t, c.call("entities/get", m{"collectionName": "renamed", "id": 2})), 1)
	c.call("collections/drop", m{"collectionName": "renamed"})
	require.Equal(t, []string{}, decode[[]string](t, c.call("collections/list", m{})))
}

func TestSchemaFormPartitionsIndexes(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{
		"Accept-Type-Allow-Int64": "true",
		"Authorization":           "Bearer root:Milvus",
	}}
	c.call("collections/create", m{
		"collectionName": "movies",
		"schema": m{"autoId": false, "enableDynamicField": false, "fields": []m{
			{"fieldName": "id", "dataType": "VarChar", "isPrimary": true, "elementTypeParams": m{"max_length": 64}},
			{"fieldName": "year", "dataType": "Int64"},
			{"fieldName": "rating", "dataType": "Double", "nullable": true},
			{
				"fieldName": "tags", "dataType": "Array", "elementDataType": "VarChar",
				"elementTypeParams": m{"max_capacity": 4, "max_length": 16},
			},
			{"fieldName": "info", "dataType": "JSON"},
			{"fieldName": "embedding", "dataType": "FloatVector", "elementTypeParams": m{"dim": "2"}},
		}},
		"indexParams": []m{{
			"fieldName": "embedding", "indexName": "emb", "metricType": "IP", "indexType": "HNSW",
			"params": m{"M": 8, "efConstruction": 64},
		}},
	})
	desc := decode[m](t, c.call("collections/describe", m{"collectionName": "movies"}))
	require.Equal(t, false, desc["enableDynamicField"])
	require.Equal(t, "LoadStateLoaded", desc["load"])

	c.call("partitions/create", m{"collectionName": "movies", "partitionName": "p1"})
	require.Equal(t, []string{"_default", "p1"}, decode[[]string](t, c.call("partitions/list", m{"collectionName": "movies"})))
	require.Equal(t, m{"has": true}, decode[m](t, c.call("partitions/has", m{"collectionName": "movies", "partitionName": "p1"})))
	c.call("entities/insert", m{"collectionName": "movies", "partitionName": "p1", "data": []m{
		{"id": "a", "year": 1999, "rating": 7.5, "tags": []string{"x"}, "info": m{"k": 1}, "embedding": []float32{1, 0}},
		{"id": "b", "year": 2005, "rating": nil, "tags": []string{}, "info": m{"k": 2}, "embedding": []float32{0, 1}},
	}})
	c.fail("entities/insert", m{"collectionName": "movies", "data": []m{{
		"id": "c", "year": 1, "extra": 1,
		"tags": []string{}, "info": m{}, "embedding": []float32{0, 1},
	}}})
	q := decode[[]m](t, c.call("entities/query", m{
		"collectionName": "movies", "filter": "year > 2000",
		"partitionNames": []string{"p1"}, "consistencyLevel": "Strong",
	}))
	require.Len(t, q, 1)
	require.Equal(t, "b", q[0]["id"])
	require.Equal(t, float64(2005), q[0]["year"], "int64 values are numbers with Accept-Type-Allow-Int64")
	require.Nil(t, q[0]["rating"])
	require.Equal(t, m{"k": float64(2)}, q[0]["info"])
	s := decode[[]m](t, c.call("entities/search", m{
		"collectionName": "movies", "data": [][]float32{{1, 0}},
		"annsField": "embedding", "limit": 1, "searchParams": m{"metricType": "IP", "params": m{"ef": 16}},
		"consistencyLevel": "Strong",
	}))
	require.Equal(t, "a", s[0]["id"])
	require.Equal(t, float64(1), s[0]["distance"])
	c.call("entities/delete", m{"collectionName": "movies", "filter": `id in ["a"]`})
	got := decode[[]m](t, c.call("entities/get", m{"collectionName": "movies", "id": []string{"a", "b"}, "consistencyLevel": "Strong"}))
	require.Len(t, got, 1)

	require.Equal(t, []string{"emb"}, decode[[]string](t, c.call("indexes/list", m{"collectionName": "movies"})))
	idx := decode[[]m](t, c.call("indexes/describe", m{"collectionName": "movies", "indexName": "emb"}))
	require.Equal(t, "HNSW", idx[0]["indexType"])
	require.Equal(t, "IP", idx[0]["metricType"])
	require.Equal(t, "embedding", idx[0]["fieldName"])
	c.fail("indexes/drop", m{"collectionName": "movies", "indexName": "emb"})                                                    // loaded
	c.fail("indexes/alter_properties", m{"collectionName": "movies", "indexName": "emb", "properties": m{"mmap.enabled": true}}) // loaded
	c.call("partitions/release", m{"collectionName": "movies", "partitionNames": []string{"p1"}})
	c.call("partitions/load", m{"collectionName": "movies", "partitionNames": []string{"p1"}})
	c.call("collections/release", m{"collectionName": "movies"})
	c.call("indexes/alter_properties", m{"collectionName": "movies", "indexName": "emb", "properties": m{"mmap.enabled": true}})
	idx = decode[[]m](t, c.call("indexes/describe", m{"collectionName": "movies", "indexName": "emb"}))
	require.Equal(t, "true", idx[0]["params"].(m)["mmap.enabled"])
	c.fail("indexes/alter_properties", m{"collectionName": "movies", "indexName": "emb", "properties": m{"nlist": 8}})
	c.call("indexes/drop_properties", m{"collectionName": "movies", "indexName": "emb", "propertyKeys": []string{"mmap.enabled"}})
	idx = decode[[]m](t, c.call("indexes/describe", m{"collectionName": "movies", "indexName": "emb"}))
	require.NotContains(t, idx[0]["params"], "mmap.enabled")
	c.call("indexes/drop", m{"collectionName": "movies", "indexName": "emb"})
	require.Equal(t, []string{}, decode[[]string](t, c.call("indexes/list", m{"collectionName": "movies"})))
	c.call("indexes/create", m{"collectionName": "movies", "indexParams": []m{{"fieldName": "year", "indexName": "y", "indexType": "STL_SORT"}}})
	require.Equal(t, []string{"y"}, decode[[]string](t, c.call("indexes/list", m{"collectionName": "movies"})))
	c.call("partitions/drop", m{"collectionName": "movies", "partitionName": "p1"})
	require.Equal(t, m{"has": false}, decode[m](t, c.call("partitions/has", m{"collectionName": "movies", "partitionName": "p1"})))
}

func TestErrors(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	require.Equal(t, int32(1801), c.raw("collections/describe", `{"collectionName":`).Code)
	require.Equal(t, int32(1802), c.fail("collections/describe", m{}).Code)
	require.Equal(t, int32(1802), c.fail("collections/create", m{"collectionName": "x"}).Code)
	require.Equal(t, int32(100), c.fail("collections/describe", m{"collectionName": "missing"}).Code)
	require.Equal(t, int32(100), c.fail("entities/insert", m{"collectionName": "missing", "data": []m{{"id": 1}}}).Code)
	require.Equal(t, int32(800), c.fail("collections/list", m{"dbName": "nodb"}).Code)
	c.call("collections/create", m{"collectionName": "c", "dimension": 2})
	require.Equal(t, int32(1804), c.fail("entities/insert", m{"collectionName": "c", "data": []m{{"id": 1, "vector": []int{1}}}}).Code)
	require.Equal(t, int32(1806), c.fail("entities/get", m{"collectionName": "c", "id": "abc"}).Code)
	require.Equal(t, int32(1100), c.fail("entities/search", m{"collectionName": "c", "data": [][]float32{{1, 0}}, "limit": 0}).Code)

	resp, err := http.Post(c.base+"/v2/vectordb/nothing/here", "application/json", bytes.NewBufferString("{}"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestDatabasesAndAliases(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	require.Equal(t, []string{"default"}, decode[[]string](t, c.call("databases/list", m{})))
	c.call("databases/create", m{"dbName": "books", "properties": m{"database.replica.number": 1}})
	require.Equal(t, int32(1100), c.fail("databases/create", m{"dbName": "books"}).Code)
	require.Equal(t, []string{"books", "default"}, decode[[]string](t, c.call("databases/list", m{})))
	d := decode[m](t, c.call("databases/describe", m{"dbName": "books"}))
	require.Equal(t, "books", d["dbName"])
	require.Equal(t, []any{m{"key": "database.replica.number", "value": "1"}}, d["properties"])
	c.call("databases/alter", m{"dbName": "books", "properties": m{"k": "v"}})
	require.Len(t, decode[m](t, c.call("databases/describe", m{"dbName": "books"}))["properties"], 2)
	require.Equal(t, int32(800), c.fail("databases/describe", m{"dbName": "nope"}).Code)

	// Collections live in a database named by the body or by the DB-Name header.
	c.call("collections/create", m{"dbName": "books", "collectionName": "novels", "dimension": 2})
	require.Equal(t, []string{"novels"}, decode[[]string](t, c.call("collections/list", m{"dbName": "books"})))
	require.Equal(t, []string{}, decode[[]string](t, c.call("collections/list", m{})))
	hc := &client{t: t, base: c.base, headers: map[string]string{"DB-Name": "books"}}
	require.Equal(t, m{"has": true}, decode[m](t, hc.call("collections/has", m{"collectionName": "novels"})))
	hc.call("entities/insert", m{"collectionName": "novels", "data": []m{{"id": 1, "vector": []float32{1, 2}}}})

	// Aliases resolve wherever a collection name is accepted.
	hc.call("aliases/create", m{"aliasName": "fiction", "collectionName": "novels"})
	require.Equal(t, []string{"fiction"}, decode[[]string](t, hc.call("aliases/list", m{})))
	require.Equal(t, m{"aliasName": "fiction", "collectionName": "novels", "dbName": "books"},
		decode[m](t, hc.call("aliases/describe", m{"aliasName": "fiction"})))
	desc := decode[m](t, hc.call("collections/describe", m{"collectionName": "fiction"}))
	require.Equal(t, "novels", desc["collectionName"])
	require.Equal(t, []any{"fiction"}, desc["aliases"])
	got := decode[[]m](t, hc.call("entities/get", m{"collectionName": "fiction", "id": 1, "consistencyLevel": "Strong"}))
	require.Len(t, got, 1)
	require.Equal(t, int32(1100), hc.fail("collections/drop", m{"collectionName": "fiction"}).Code)
	require.Equal(t, int32(1100), hc.fail("collections/drop", m{"collectionName": "novels"}).Code, "it has aliases")
	require.Equal(t, int32(1601), hc.fail("collections/create", m{"collectionName": "fiction", "dimension": 2}).Code, "named like an alias")
	hc.call("collections/create", m{"collectionName": "poems", "dimension": 2})
	hc.call("aliases/alter", m{"aliasName": "fiction", "collectionName": "poems"})
	require.Equal(t, "poems", decode[m](t, hc.call("aliases/describe", m{"aliasName": "fiction"}))["collectionName"])
	require.Equal(t, int32(1600), hc.fail("aliases/alter", m{"aliasName": "nope", "collectionName": "poems"}).Code)
	require.Equal(t, []string{}, decode[[]string](t, hc.call("aliases/list", m{"collectionName": "novels"})))
	hc.call("aliases/drop", m{"aliasName": "fiction"})
	require.Equal(t, int32(1600), hc.fail("aliases/describe", m{"aliasName": "fiction"}).Code)

	require.Equal(t, int32(1100), c.fail("databases/drop", m{"dbName": "books"}).Code, "not empty")
	require.Equal(t, int32(1100), c.fail("databases/drop", m{"dbName": "default"}).Code)
	hc.call("collections/drop", m{"collectionName": "novels"})
	hc.call("collections/drop", m{"collectionName": "poems"})
	c.call("databases/drop", m{"dbName": "books"})
	require.Equal(t, []string{"default"}, decode[[]string](t, c.call("databases/list", m{})))
	require.Equal(t, int32(800), c.fail("collections/create", m{"dbName": "books", "collectionName": "x", "dimension": 2}).Code)
}

func TestAutoIDAndVarCharQuickForm(t *testing.T) {
	c := &client{t: t, base: startServer(t)}
	c.call("collections/create", m{
		"collectionName": "auto", "dimension": 2, "autoID": true,
		"primaryFieldName": "pk", "vectorFieldName": "emb",
	})
	ins := decode[m](t, c.call("entities/insert", m{"collectionName": "auto", "data": []m{
		{"emb": []float32{1, 0}, "$meta": m{"ignored": true}}, {"emb": []float32{0, 1}},
	}}))
	require.Len(t, ins["insertIds"], 2)
	got := decode[[]m](t, c.call("entities/get", m{
		"collectionName": "auto", "id": ins["insertIds"],
		"outputFields": []string{"pk"}, "consistencyLevel": "Strong",
	}))
	require.Len(t, got, 2)

	c.call("collections/create", m{
		"collectionName": "strs", "dimension": 2, "idType": "VarChar",
		"params": m{"max_length": 8, "enableDynamicField": false, "consistencyLevel": "Strong"},
	})
	desc := decode[m](t, c.call("collections/describe", m{"collectionName": "strs"}))
	require.Equal(t, false, desc["enableDynamicField"])
	require.Equal(t, "Strong", desc["consistencyLevel"])
	require.Equal(t, "VarChar", desc["fields"].([]any)[0].(m)["type"])
	c.call("entities/insert", m{"collectionName": "strs", "data": m{"id": "k1", "vector": []float32{1, 1}}})
	got = decode[[]m](t, c.call("entities/get", m{"collectionName": "strs", "id": "k1"}))
	require.Equal(t, "k1", got[0]["id"])
	require.Equal(t, int32(1804), c.fail("entities/insert", m{"collectionName": "strs", "data": []m{{"id": "k2", "vector": []float32{1, 1}, "x": 1}}}).Code)
}
