'use strict';
// Full-text search through the Milvus Node SDK: a BM25 function in the
// schema, raw text inserted, searched with query texts, alone and in a
// hybrid search with a dense field. Expected orders and scores are
// Milvus's BM25 (k1 1.2, b 0.75) computed here over the standard
// analyzer's tokens.
const test = require('node:test');
const assert = require('node:assert/strict');
const { DataType, FunctionType, RRFRanker } = require('@zilliz/milvus2-sdk-node');
const { newClient, newName, ok } = require('./common');

const DOCS = [
  'Milvus is an open-source vector database built for scalable similarity search',
  'The zebra is an African equine with distinctive black and white stripes',
  'A zebra crossing is a pedestrian crossing marked with white stripes',
  'Bananas are rich in potassium and grow in tropical climates',
  'Zebra finches are small birds that sing complex songs',
  'Horses and donkeys are domesticated equine animals',
  'Full text search ranks documents by BM25 relevance to the query terms',
];

const tokens = s => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];

// Milvus's BM25 score of every doc for query q.
function bm25(docs, q, k1 = 1.2, b = 0.75) {
  const toks = docs.map(tokens);
  const avgdl = toks.reduce((n, t) => n + t.length, 0) / docs.length;
  return toks.map(t => {
    let s = 0;
    for (const w of tokens(q)) {
      const tf = t.filter(x => x === w).length;
      if (!tf) continue;
      const df = toks.filter(u => u.includes(w)).length;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * t.length / avgdl));
    }
    return s;
  });
}

test('bm25: full-text search with query texts, alone and fused with a dense field', async () => {
  const c = newClient();
  const name = newName('bm25_');
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'id', data_type: DataType.Int64, is_primary_key: true },
        { name: 'text', data_type: DataType.VarChar, max_length: 1000, enable_analyzer: true },
        { name: 'sparse', data_type: DataType.SparseFloatVector },
        { name: 'dense', data_type: DataType.FloatVector, dim: 2 },
      ],
      functions: [{ name: 'text_bm25', type: FunctionType.BM25, input_field_names: ['text'],
        output_field_names: ['sparse'], params: {} }],
      index_params: [
        { field_name: 'sparse', index_type: 'SPARSE_INVERTED_INDEX', metric_type: 'BM25' },
        { field_name: 'dense', index_type: 'FLAT', metric_type: 'L2' },
      ],
    }));
    const desc = ok(await c.describeCollection({ collection_name: name }));
    assert.equal(desc.schema.functions.length, 1);
    assert.deepEqual(desc.schema.functions[0].input_field_names, ['text']);
    assert.deepEqual(desc.schema.functions[0].output_field_names, ['sparse']);
    assert.equal(desc.schema.fields.find(f => f.name === 'sparse').is_function_output, true);

    // The client sends text only; the server computes the sparse field.
    ok(await c.insert({ collection_name: name,
      data: DOCS.map((t, i) => ({ id: i, text: t, dense: [i, 0] })) }));
    await c.loadCollectionSync({ collection_name: name });

    const q = 'zebra equine';
    const want = bm25(DOCS, q);
    const order = want.map((s, i) => i).filter(i => want[i] > 0).sort((x, y) => want[y] - want[x]);
    const res = ok(await c.search({
      collection_name: name, data: [q], anns_field: 'sparse', limit: 10,
      output_fields: ['id', 'text'], consistency_level: 'Strong',
    }));
    assert.deepEqual(res.results.map(r => Number(r.id)), order);
    for (const r of res.results) {
      const w = want[Number(r.id)];
      assert.ok(Math.abs(r.score - w) <= 1e-4 * w, `id ${r.id}: ${r.score} vs ${w}`);
      assert.equal(r.text, DOCS[Number(r.id)]);
    }

    // Hybrid: dense nearest to [6, 0] is the last doc, which BM25 does not match.
    const hy = ok(await c.hybridSearch({
      collection_name: name,
      data: [
        { data: [6, 0], anns_field: 'dense', params: { metric_type: 'L2' } },
        { data: q, anns_field: 'sparse' },
      ],
      rerank: RRFRanker(60), limit: DOCS.length, output_fields: ['id'], consistency_level: 'Strong',
    }));
    const dense = DOCS.map((_, i) => i).sort((x, y) => Math.abs(x - 6) - Math.abs(y - 6));
    const fused = new Map();
    for (const list of [dense, order]) {
      list.forEach((id, rank) => fused.set(id, (fused.get(id) || 0) + 1 / (60 + rank + 1)));
    }
    for (const r of hy.results) {
      const w = fused.get(Number(r.id));
      assert.ok(Math.abs(r.score - w) <= 1e-5 * w, `id ${r.id}: ${r.score} vs ${w}`);
    }
    const best = [...fused.entries()].sort((x, y) => y[1] - x[1])[0][0];
    assert.equal(Number(hy.results[0].id), best);
  } finally {
    await c.dropCollection({ collection_name: name });
    await c.closeConnection();
  }
});
