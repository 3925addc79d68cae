package rest_test

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// twoVectorCollection creates "hy": id, cat (= id % 3), a = [id, 0] and
// b = [0, 7·id mod 20] (FLAT, L2), with ids 0..19, so that the nearest
// neighbours of [0, 0] in a and in b differ and have no ties.
func twoVectorCollection(t testing.TB, c *client) {
	t.Helper()
	c.call("collections/create", m{
		"collectionName": "hy",
		"schema": m{"fields": []m{
			{"fieldName": "id", "dataType": "Int64", "isPrimary": true},
			{"fieldName": "cat", "dataType": "Int64"},
			{"fieldName": "a", "dataType": "FloatVector", "elementTypeParams": m{"dim": 2}},
			{"fieldName": "b", "dataType": "FloatVector", "elementTypeParams": m{"dim": 2}},
		}},
		"indexParams": []m{
			{"fieldName": "a", "indexName": "a", "metricType": "L2", "indexType": "FLAT"},
			{"fieldName": "b", "indexName": "b", "metricType": "L2", "indexType": "FLAT"},
		},
	})
	var rows []m
	for i := range 20 {
		rows = append(rows, m{"id": i, "cat": i % 3, "a": []float32{float32(i), 0}, "b": []float32{0, float32(7 * i % 20)}})
	}
	c.call("entities/insert", m{"collectionName": "hy", "data": rows})
}

// nearest lists the ids of the k rows nearest to [0, 0] in a or b, nearest first.
func nearest(field string, k int) []int {
	ids := make([]int, 20)
	for i := range ids {
		ids[i] = i
	}
	d := func(i int) int {
		if field == "a" {
			return i
		}
		return 7 * i % 20
	}
	sort.Slice(ids, func(x, y int) bool { return d(ids[x]) < d(ids[y]) })
	return ids[:k]
}

// hits decodes a search reply into (id, distance) pairs.
func hits(t *testing.T, r reply) ([]int, []float64) {
	t.Helper()
	var ids []int
	var ds []float64
	for _, h := range decode[[]m](t, r) {
		ids = append(ids, int(h["id"].(float64)))
		ds = append(ds, h["distance"].(float64))
	}
	return ids, ds
}

func TestHybridSearch(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	twoVectorCollection(t, c)
	sub := func(field string) m {
		return m{"data": [][]float32{{0, 0}}, "annsField": field, "limit": 5, "params": m{"metricType": "L2"}}
	}

	// RRF with k = 10: a hit scores Σ 1/(10 + rank) over the lists it is in.
	rrf := map[int]float64{}
	for _, f := range []string{"a", "b"} {
		for rank, id := range nearest(f, 5) {
			rrf[id] += 1 / float64(10+rank+1)
		}
	}
	for _, path := range []string{"entities/hybrid_search", "entities/advanced_search"} {
		r := c.call(path, m{
			"collectionName": "hy", "search": []m{sub("a"), sub("b")},
			"rerank": m{"strategy": "rrf", "params": m{"k": 10}}, "limit": 4, "outputFields": []string{"cat"},
			"consistencyLevel": "Strong",
		})
		require.Equal(t, []int64{4}, r.Topks)
		ids, ds := hits(t, r)
		require.Len(t, ids, 4)
		for i, id := range ids {
			require.InDelta(t, rrf[id], ds[i], 1e-6, "hit %d (id %d)", i, id)
			if i > 0 {
				require.GreaterOrEqual(t, ds[i-1], ds[i], "best first")
			}
		}
		best := []float64{}
		for _, s := range rrf {
			best = append(best, s)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(best)))
		require.InDeltaSlice(t, best[:4], ds, 1e-6)
		require.Equal(t, float64(ids[0]%3), decode[[]m](t, r)[0]["cat"], "output fields come with the fused hits")
	}
	// id 0 is nearest in both lists: it is first, with 2/(10+1).
	ids, ds := hits(t, c.call("entities/hybrid_search", m{
		"collectionName": "hy", "search": []m{sub("a"), sub("b")},
		"rerank": m{"strategy": "rrf", "params": m{"k": 10}}, "limit": 1, "consistencyLevel": "Strong",
	}))
	require.Equal(t, []int{0}, ids)
	require.InDelta(t, 2.0/11, ds[0], 1e-6)

	// Weighted with norm_score: Σ w × (1 − 2·atan(d)/π), best first.
	w := []float64{0.8, 0.2}
	want := map[int]float64{}
	for j, f := range []string{"a", "b"} {
		for _, id := range nearest(f, 5) {
			x := float64(id)
			if f == "b" {
				x = float64(7 * id % 20)
			}
			want[id] += w[j] * (1 - 2*math.Atan(x*x)/math.Pi)
		}
	}
	r := c.call("entities/hybrid_search", m{
		"collectionName": "hy", "search": []m{sub("a"), sub("b")},
		"rerank": m{"strategy": "weighted", "params": m{"weights": w, "norm_score": true}}, "limit": 3,
		"offset": 1, "consistencyLevel": "Strong",
	})
	ids, ds = hits(t, r)
	scores := []float64{}
	for _, s := range want {
		scores = append(scores, s)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(scores)))
	require.InDeltaSlice(t, scores[1:4], ds, 1e-5, "offset 1 skips the best fused hit")
	for i, id := range ids {
		require.InDelta(t, want[id], ds[i], 1e-5)
	}

	// A sub-search with a filter and a search by primary key.
	ids, _ = hits(t, c.call("entities/hybrid_search", m{"collectionName": "hy", "search": []m{
		{"data": [][]float32{{0, 0}}, "annsField": "a", "limit": 3, "filter": "cat == 1"},
		{"ids": []int{1}, "annsField": "b", "limit": 3, "filter": "cat == 1"},
	}, "limit": 10, "consistencyLevel": "Strong"}))
	for _, id := range ids {
		require.Equal(t, 1, id%3, "filter cat == 1")
	}
	require.Equal(t, 1, ids[0], "id 1 is first in both lists")

	for _, bad := range []struct {
		body m
		code int32
	}{
		{m{"collectionName": "hy"}, 1802},
		{m{"collectionName": "hy", "search": []m{{"annsField": "a"}}}, 1802},
		{m{"collectionName": "hy", "search": []m{sub("a")}, "rerank": m{"strategy": "max"}}, 1100},
		{m{"collectionName": "hy", "search": []m{sub("a"), sub("b")}, "rerank": m{
			"strategy": "weighted",
			"params":   m{"weights": []float64{1}},
		}}, 1100},
		{m{"collectionName": "hy", "search": []m{sub("a")}, "limit": 0}, 1100},
		{m{"collectionName": "hy", "search": []m{sub("a")}, "consistencyLevel": "Sometimes"}, 1100},
		{m{"collectionName": "hy", "search": []m{{"data": [][]float32{{0, 0}}, "annsField": "nope"}}}, 1100},
		{m{"collectionName": "hy", "search": []m{{"data": [][]float32{{0, 0}}, "ids": []int{1}, "annsField": "a"}}}, 1100},
	} {
		require.Equal(t, bad.code, c.fail("entities/hybrid_search", bad.body).Code, "%v", bad.body)
	}
	require.Contains(t, c.fail("entities/hybrid_search", m{
		"collectionName": "hy", "search": []m{sub("a"), sub("b")},
		"rerank": m{"strategy": "weighted", "params": m{"weights": []float64{1}}},
	}).Message, "weights")
}

func TestSearchParity(t *testing.T) {
	c := &client{t: t, base: startServer(t), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	twoVectorCollection(t, c)
	q := func(extra m) m {
		b := m{"collectionName": "hy", "data": [][]float32{{0, 0}}, "annsField": "a", "consistencyLevel": "Strong"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	// offset
	ids, ds := hits(t, c.call("entities/search", q(m{"limit": 3, "offset": 2})))
	require.Equal(t, []int{2, 3, 4}, ids)
	require.Equal(t, []float64{4, 9, 16}, ds)

	// radius / range_filter (L2: range_filter ≤ d < radius)
	ids, _ = hits(t, c.call("entities/search", q(m{
		"limit":        10,
		"searchParams": m{"metricType": "L2", "params": m{"radius": 30, "range_filter": 3}},
	})))
	require.Equal(t, []int{2, 3, 4, 5}, ids)

	// groupingField, with groupSize
	r := c.call("entities/search", q(m{"limit": 3, "groupingField": "cat", "outputFields": []string{"cat"}}))
	ids, _ = hits(t, r)
	require.Equal(t, []int{0, 1, 2}, ids, "one hit per cat")
	ids, _ = hits(t, c.call("entities/search", q(m{
		"limit": 2, "groupingField": "cat", "groupSize": 2,
		"strictGroupSize": true,
	})))
	require.Equal(t, []int{0, 3, 1, 4}, ids, "two hits for each of the two best cats, group by group")

	// search by primary key: the stored vectors of ids 5 and 0
	r = c.call("entities/search", m{
		"collectionName": "hy", "ids": []int{5, 0}, "annsField": "a", "limit": 2,
		"consistencyLevel": "Strong",
	})
	require.Equal(t, []int64{2, 2}, r.Topks)
	ids, ds = hits(t, r)
	require.Equal(t, 5, ids[0])
	require.Equal(t, 0.0, ds[0])
	require.Equal(t, []int{0, 1}, ids[2:])

	require.Equal(t, int32(1806), c.fail("entities/search", m{"collectionName": "hy", "ids": []string{"x"}, "annsField": "a"}).Code)
	require.Equal(t, int32(1100), c.fail("entities/search", q(m{"ids": []int{1}})).Code)
	require.Equal(t, int32(1802), c.fail("entities/search", m{"collectionName": "hy", "annsField": "a"}).Code)
	require.Equal(t, int32(1100), c.fail("entities/search", q(m{"offset": -1})).Code)
	require.Equal(t, int32(1801), c.fail("entities/search", q(m{"searchParams": m{"params": 3}})).Code)
	require.Equal(t, int32(1801), c.fail("entities/search", q(m{"searchParams": m{"ignoreGrowing": "maybe"}})).Code)
	ids, _ = hits(t, c.call("entities/search", q(m{
		"limit":        10,
		"searchParams": m{"params": `{"radius": 30, "range_filter": 3}`},
	})))
	require.Equal(t, []int{2, 3, 4, 5}, ids, "params as a JSON string")
}

// BenchmarkHybridSearch measures one REST hybrid_search round trip (two
// sub-searches of limit 5 over 20 rows, RRF, one output field) against the
// same search through entities/search, to show the cost of the fusion and
// the requery by primary key.
func BenchmarkHybridSearch(b *testing.B) {
	c := &client{t: b, base: startServer(b), headers: map[string]string{"Accept-Type-Allow-Int64": "true"}}
	twoVectorCollection(b, c)
	sub := func(field string) m {
		return m{"data": [][]float32{{0, 0}}, "annsField": field, "limit": 5}
	}
	b.Run("hybrid", func(b *testing.B) {
		c := &client{t: b, base: c.base, headers: c.headers}
		body := m{"collectionName": "hy", "search": []m{sub("a"), sub("b")}, "limit": 5, "outputFields": []string{"cat"}}
		for b.Loop() {
			c.call("entities/hybrid_search", body)
		}
	})
	b.Run("search", func(b *testing.B) {
		c := &client{t: b, base: c.base, headers: c.headers}
		body := sub("a")
		body["collectionName"], body["outputFields"] = "hy", []string{"cat"}
		for b.Loop() {
			c.call("entities/search", body)
		}
	})
}
