'use strict';
// The Milvus Node SDK on binary, float16 and sparse vectors: insert, byte-exact
// query/get output, search with indexes checked against brute force computed
// here, and bad input (the same flows as clients/python/test_vectypes.py and
// test_sparse.py).
const test = require('node:test');
const assert = require('node:assert/strict');
const { DataType, RRFRanker, WeightedRanker } = require('@zilliz/milvus2-sdk-node');
const { newClient, newName, ok } = require('./common');

// Deterministic PRNG (mulberry32), as in common.js.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const popcount8 = b => { let n = 0; for (; b; b &= b - 1) n++; return n; };
const hamming = (a, b) => a.reduce((s, x, i) => s + popcount8(x ^ b[i]), 0);
function jaccard(a, b) {
  let inter = 0, union = 0;
  a.forEach((x, i) => { inter += popcount8(x & b[i]); union += popcount8(x | b[i]); });
  return union === 0 ? 0 : 1 - inter / union;
}
const l2 = (a, b) => a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0);
const sparseDot = (row, q) => Object.entries(row).reduce((s, [k, v]) => s + v * (q[k] || 0), 0);
const f32 = x => Math.fround(x);

// checkHits: hits name their primary key "pk" (Node keys a hit by the pk field's
// name); every hit's score equals the brute-force score of its id, hits are
// sorted best first, and at least minRecall of the true top-k scores are reached.
function checkHits(hits, scoreOf, allIds, { larger, k, tol = 1e-5, minRecall = 1, positiveOnly = false }) {
  for (const h of hits) {
    const want = scoreOf(Number(h.pk));
    assert.ok(Math.abs(h.score - want) <= tol * (1 + Math.abs(want)), `pk ${h.pk}: score ${h.score}, brute force ${want}`);
  }
  for (let i = 1; i < hits.length; i++) {
    assert.ok(larger ? hits[i - 1].score >= hits[i].score : hits[i - 1].score <= hits[i].score, 'sorted');
  }
  let all = allIds.map(scoreOf);
  if (positiveOnly) all = all.filter(s => s > 0);
  all.sort((a, b) => (larger ? b - a : a - b));
  const top = all.slice(0, k);
  assert.equal(hits.length, top.length);
  if (top.length === 0) return;
  const kth = top[top.length - 1];
  const slack = tol * (1 + Math.abs(kth));
  const reached = hits.filter(h => (larger ? h.score >= kth - slack : h.score <= kth + slack)).length;
  assert.ok(reached / top.length >= minRecall, `recall ${reached}/${top.length}`);
}

async function waitIndexed(c, name, indexName, rows) {
  for (let i = 0; i < 300; i++) {
    const d = ok(await c.describeIndex({ collection_name: name, index_name: indexName }));
    const x = d.index_descriptions[0];
    if (Number(x.indexed_rows) >= rows && Number(x.pending_index_rows) === 0 && x.state === 'Finished') return x;
    await new Promise(r => setTimeout(r, 200));
  }
  throw new Error(`index ${indexName} of ${name} not built`);
}

const N = 400;

test('binary vectors: HAMMING and JACCARD with BIN_FLAT and BIN_IVF_FLAT', async () => {
  const c = newClient();
  const name = newName();
  const DIM = 64;
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.Int64, is_primary_key: true, autoID: false },
        { name: 'tag', data_type: DataType.Int32 },
        { name: 'bv', data_type: DataType.BinaryVector, dim: DIM },
      ],
      index_params: { field_name: 'bv', index_name: 'bv', index_type: 'BIN_FLAT', metric_type: 'HAMMING' },
    }));
    const r = rng(3);
    const centres = Array.from({ length: 6 }, () => Array.from({ length: DIM / 8 }, () => Math.floor(r() * 256)));
    const base = Array.from({ length: N }, () => centres[Math.floor(r() * 6)].map(b => b ^ (r() < 0.3 ? 1 << Math.floor(r() * 8) : 0)));
    const data = base.map((v, i) => ({ pk: i, tag: i % 4, bv: v }));
    ok(await c.insert({ collection_name: name, data: data.slice(0, 300) }));
    ok(await c.flushSync({ collection_names: [name] }));
    ok(await c.insert({ collection_name: name, data: data.slice(300) }));

    const g = ok(await c.get({ collection_name: name, ids: [0, 299, 399], output_fields: ['pk', 'bv'] }));
    assert.equal(g.data.length, 3);
    for (const row of g.data) assert.deepEqual(row.bv, base[Number(row.pk)]);
    const q = ok(await c.query({ collection_name: name, filter: 'tag == 2 and pk < 40', output_fields: ['pk', 'bv'], consistency_level: 'Strong' }));
    assert.deepEqual(q.data.map(x => Number(x.pk)).sort((a, b) => a - b), [2, 6, 10, 14, 18, 22, 26, 30, 34, 38]);
    for (const row of q.data) assert.deepEqual(row.bv, base[Number(row.pk)]);

    const ids = [...base.keys()];
    const queries = [base[5], base[350], Array.from({ length: DIM / 8 }, () => Math.floor(r() * 256))];
    const searchAll = async (metric, params) => {
      const s = ok(await c.search({
        collection_name: name, data: queries, limit: 10, metric_type: metric, params,
        output_fields: ['pk'], consistency_level: 'Strong',
      }));
      assert.equal(s.results.length, queries.length);
      return s.results;
    };
    let res = await searchAll('HAMMING', {});
    res.forEach((hits, i) => checkHits(hits, id => hamming(base[id], queries[i]), ids, { larger: false, k: 10 }));
    assert.equal(Number(res[0][0].pk), 5);
    assert.equal(res[0][0].score, 0);

    for (const [indexType, metric, dist] of [['BIN_IVF_FLAT', 'HAMMING', hamming], ['BIN_IVF_FLAT', 'JACCARD', jaccard], ['BIN_FLAT', 'JACCARD', jaccard]]) {
      ok(await c.releaseCollection({ collection_name: name }));
      ok(await c.dropIndex({ collection_name: name, field_name: 'bv', index_name: 'bv' }));
      ok(await c.createIndex({
        collection_name: name, field_name: 'bv', index_name: 'bv', index_type: indexType, metric_type: metric,
        params: indexType === 'BIN_IVF_FLAT' ? { nlist: 8 } : {},
      }));
      const info = await waitIndexed(c, name, 'bv', 300);
      const params = Object.fromEntries(info.params.map(p => [p.key, p.value]));
      assert.equal(params.index_type, indexType);
      assert.equal(params.metric_type, metric);
      ok(await c.loadCollectionSync({ collection_name: name }));
      res = await searchAll(metric, { nprobe: 8 });
      res.forEach((hits, i) => checkHits(hits, id => dist(base[id], queries[i]), ids, { larger: false, k: 10 }));
      const wrong = await c.search({ collection_name: name, data: [queries[0]], limit: 3, metric_type: 'L2' });
      assert.equal(wrong.status.code, 1100);
    }
    // 4 bytes where dim 64 needs 8: the SDK refuses the insert itself; the
    // search reaches the server.
    await assert.rejects(c.insert({ collection_name: name, data: [{ pk: 9999, tag: 0, bv: [1, 2, 3, 4] }] }),
      /dimension \/ 8/);
    const bad = await c.search({ collection_name: name, data: [[1, 2, 3, 4]], limit: 3, metric_type: 'JACCARD' });
    assert.equal(bad.status.code, 1100);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('float16 and bfloat16 vectors: number arrays in and out, HNSW and IVF_FLAT', async () => {
  const c = newClient();
  const name = newName();
  const DIM = 8;
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.VarChar, max_length: 16, is_primary_key: true, autoID: false },
        { name: 'h', data_type: DataType.Float16Vector, dim: DIM },
        { name: 'b', data_type: DataType.BFloat16Vector, dim: DIM },
      ],
      index_params: [
        { field_name: 'h', index_type: 'HNSW', metric_type: 'L2', params: { M: 16, efConstruction: 128 } },
        { field_name: 'b', index_type: 'IVF_FLAT', metric_type: 'IP', params: { nlist: 4 } },
      ],
    }));
    const r = rng(9);
    // Values exact in both float16 and bfloat16 (multiples of 1/64 in [-2, 2)),
    // so what the SDK converts is what is stored.
    const base = Array.from({ length: N }, () => Array.from({ length: DIM }, () => Math.floor(r() * 256 - 128) / 64));
    const data = base.map((v, i) => ({ pk: `k${i}`, h: v, b: v }));
    ok(await c.insert({ collection_name: name, data: data.slice(0, 300) }));
    ok(await c.flushSync({ collection_names: [name] }));
    ok(await c.insert({ collection_name: name, data: data.slice(300) }));
    await waitIndexed(c, name, 'h', 300);

    const g = ok(await c.get({ collection_name: name, ids: ['k1', 'k399'], output_fields: ['pk', 'h', 'b'] }));
    assert.equal(g.data.length, 2);
    for (const row of g.data) {
      const i = Number(row.pk.slice(1));
      assert.deepEqual(row.h, base[i]);
      assert.deepEqual(row.b, base[i]);
    }
    const ids = [...base.keys()];
    const idOf = h => Number(String(h.pk).slice(1));
    const qv = base[42].map(x => x + 1 / 64);
    const sh = ok(await c.search({
      collection_name: name, anns_field: 'h', data: [qv], limit: 10, metric_type: 'L2', params: { ef: 64 },
      output_fields: ['pk'], consistency_level: 'Strong',
    }));
    checkHits(sh.results.map(h => ({ pk: idOf(h), score: h.score })), id => l2(base[id], qv), ids,
      { larger: false, k: 10, tol: 2e-3, minRecall: 0.9 });
    const sb = ok(await c.search({
      collection_name: name, anns_field: 'b', data: [qv], limit: 10, metric_type: 'IP', params: { nprobe: 4 },
      output_fields: ['pk'], consistency_level: 'Strong',
    }));
    const ip = (a, b2) => a.reduce((s, x, i) => s + x * b2[i], 0);
    checkHits(sb.results.map(h => ({ pk: idOf(h), score: h.score })), id => ip(base[id], qv), ids,
      { larger: true, k: 10, tol: 2e-3 });
    const wrongDim = await c.insert({ collection_name: name, data: [{ pk: 'x', h: [1, 2, 3], b: base[0] }] });
    assert.equal(wrongDim.status.code, 1100);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('sparse vectors: dict, coo and csr rows with SPARSE_INVERTED_INDEX and SPARSE_WAND', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.Int64, is_primary_key: true, autoID: false },
        { name: 'sv', data_type: DataType.SparseFloatVector },
      ],
      index_params: { field_name: 'sv', index_name: 'sv', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'IP',
        params: { inverted_index_algo: 'DAAT_MAXSCORE' } },
    }));
    const r = rng(17);
    const base = Array.from({ length: N }, () => {
      const row = {};
      const n = 3 + Math.floor(r() * 20);
      for (let j = 0; j < n; j++) row[Math.floor(r() < 0.3 ? r() * 30 : r() * 1000)] = f32(r() + 0.01);
      return row;
    });
    const asInput = (row, i) => {
      const keys = Object.keys(row).map(Number).sort((a, b) => a - b);
      if (i % 3 === 1) return keys.map(k => ({ index: k, value: row[k] })); // coo
      if (i % 3 === 2) return { indices: keys, values: keys.map(k => row[k]) }; // csr
      return row; // dict
    };
    const data = base.map((row, i) => ({ pk: i, sv: asInput(row, i) }));
    ok(await c.insert({ collection_name: name, data: data.slice(0, 300) }));
    ok(await c.flushSync({ collection_names: [name] }));
    ok(await c.insert({ collection_name: name, data: data.slice(300) }));
    await waitIndexed(c, name, 'sv', 300);

    const g = ok(await c.get({ collection_name: name, ids: [0, 1, 2, 399], output_fields: ['pk', 'sv'] }));
    assert.equal(g.data.length, 4);
    for (const row of g.data) {
      const want = Object.fromEntries(Object.entries(base[Number(row.pk)]).map(([k, v]) => [String(k), v]));
      assert.deepEqual(Object.fromEntries(Object.entries(row.sv).map(([k, v]) => [String(k), v])), want);
    }
    const ids = [...base.keys()];
    const queries = [base[7], base[333], { 3: 0.5, 17: 1.5, 999: 0.25 }];
    for (const indexType of ['SPARSE_INVERTED_INDEX', 'SPARSE_WAND']) {
      if (indexType === 'SPARSE_WAND') {
        ok(await c.releaseCollection({ collection_name: name }));
        ok(await c.dropIndex({ collection_name: name, field_name: 'sv', index_name: 'sv' }));
        ok(await c.createIndex({ collection_name: name, field_name: 'sv', index_name: 'sv', index_type: indexType, metric_type: 'IP' }));
        await waitIndexed(c, name, 'sv', 300);
        ok(await c.loadCollectionSync({ collection_name: name }));
      }
      for (const drop of [0, 0.3]) {
        const s = ok(await c.search({
          collection_name: name, data: queries, limit: 10, params: { drop_ratio_search: drop },
          output_fields: ['pk'], consistency_level: 'Strong',
        }));
        s.results.forEach((hits, i) => checkHits(hits, id => sparseDot(base[id], queries[i]), ids,
          { larger: true, k: 10, minRecall: drop === 0 ? 1 : 0.7, positiveOnly: true }));
      }
    }
    const neg = await c.insert({ collection_name: name, data: [{ pk: 9999, sv: { 1: -1 } }] });
    assert.equal(neg.status.code, 1100);
    const badDrop = await c.search({ collection_name: name, data: [{ 1: 1 }], limit: 3, params: { drop_ratio_search: 1 } });
    assert.equal(badDrop.status.code, 1100);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('hybrid search: a dense and a sparse sub-search fused with RRFRanker and WeightedRanker', async () => {
  const c = newClient();
  const name = newName();
  const DIM = 4;
  const n = 200;
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.Int64, is_primary_key: true, autoID: false },
        { name: 'g', data_type: DataType.Int32 },
        { name: 'dv', data_type: DataType.FloatVector, dim: DIM },
        { name: 'sv', data_type: DataType.SparseFloatVector },
      ],
      index_params: [
        { field_name: 'dv', index_type: 'FLAT', metric_type: 'L2' },
        { field_name: 'sv', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'IP' },
      ],
    }));
    const r = rng(23);
    const dense = Array.from({ length: n }, () => Array.from({ length: DIM }, () => f32(r() * 2 - 1)));
    const sparse = Array.from({ length: n }, () => {
      const row = {};
      for (let j = 0; j < 5; j++) row[Math.floor(r() * 40)] = f32(r() + 0.05);
      return row;
    });
    ok(await c.insert({ collection_name: name, data: dense.map((v, i) => ({ pk: i, g: i % 3, dv: v, sv: sparse[i] })) }));
    const qd = [0.2, -0.1, 0.4, 0.0];
    const qs = sparse[3];
    const L = 10;
    const l2s = dense.map(v => l2(v, qd));
    const dots = sparse.map(row => sparseDot(row, qs));
    const topRows = (scores, larger) => [...scores.keys()].filter(i => !larger || scores[i] > 0)
      .sort((a, b) => (larger ? scores[b] - scores[a] : scores[a] - scores[b])).slice(0, L);
    const dl = topRows(l2s, false);
    const sl = topRows(dots, true);
    const cases = [
      [RRFRanker(20), (row) => [dl, sl].reduce((s, l) => s + (l.includes(row) ? 1 / (20 + l.indexOf(row) + 1) : 0), 0)],
      // without norm_score, the L2 scores are turned larger-is-better (1 - 2 atan(d) / pi) because the metrics mix
      [WeightedRanker([0.5, 0.5]), (row) => (dl.includes(row) ? 0.5 * (1 - 2 * Math.atan(l2s[row]) / Math.PI) : 0) +
        (sl.includes(row) ? 0.5 * dots[row] : 0)],
    ];
    for (const [rerank, fused] of cases) {
      const res = ok(await c.hybridSearch({
        collection_name: name, limit: L, rerank, output_fields: ['pk', 'g'], consistency_level: 'Strong',
        data: [
          { data: qd, anns_field: 'dv', params: { metric_type: 'L2' } },
          { data: qs, anns_field: 'sv' },
        ],
      }));
      const candidates = [...new Set([...dl, ...sl])];
      checkHits(res.results, fused, candidates, { larger: true, k: L, tol: 1e-5 });
      for (const h of res.results) assert.equal(Number(h.g), Number(h.pk) % 3);
    }
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});
