'use strict';
// Binary and float16 vectors through the Milvus Node SDK: the same flows as
// clients/python/test_vector_types.py.
const test = require('node:test');
const assert = require('node:assert/strict');
const { DataType } = require('@zilliz/milvus2-sdk-node');
const { newClient, newName, ok } = require('./common');

// Values exactly representable in float16, so they come back unchanged.
const HALF = [[0.5, -1.25, 2, 0], [1, 1, 1, 1], [-3, 0.25, 0, 8], [0, 0, 0.125, -0.5]];
const BITS = [[255, 1], [0, 128], [15, 240], [170, 85]];

function popcount(x) {
  let n = 0;
  for (; x; x >>= 1) n += x & 1;
  return n;
}

// asNumbers turns an output vector (numbers, a Buffer or a typed array) into numbers.
function asNumbers(v) {
  return Array.from(v, Number);
}

test('vector types: binary (HAMMING, BIN_IVF_FLAT) and float16 (L2, FLAT)', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'id', data_type: DataType.Int64, is_primary_key: true },
        { name: 'bits', data_type: DataType.BinaryVector, dim: 16 },
        { name: 'half', data_type: DataType.Float16Vector, dim: 4 },
      ],
    }));
    ok(await c.createIndex({ collection_name: name, field_name: 'bits', index_type: 'BIN_IVF_FLAT',
      metric_type: 'HAMMING', params: { nlist: 2 } }));
    ok(await c.createIndex({ collection_name: name, field_name: 'half', index_type: 'FLAT', metric_type: 'L2' }));
    ok(await c.loadCollectionSync({ collection_name: name }));
    const data = HALF.map((h, i) => ({ id: i, bits: BITS[i], half: h }));
    ok(await c.insert({ collection_name: name, data }));

    const sb = ok(await c.search({
      collection_name: name, data: [[255, 0]], anns_field: 'bits', limit: 4,
      params: { nprobe: 2 }, output_fields: ['id'], consistency_level: 'Strong',
    }));
    const want = BITS.map(b => popcount(b[0] ^ 255) + popcount(b[1])).sort((x, y) => x - y);
    assert.deepEqual(sb.results.map(r => r.score), want);
    assert.equal(Number(sb.results[0].id), 0);

    const sh = ok(await c.search({
      collection_name: name, data: [[-3, 0.25, 0, 8]], anns_field: 'half', limit: 1,
      output_fields: ['id'], consistency_level: 'Strong',
    }));
    assert.equal(Number(sh.results[0].id), 2);
    assert.equal(sh.results[0].score, 0);

    const q = ok(await c.query({
      collection_name: name, filter: 'id in [0, 3]', output_fields: ['id', 'bits', 'half'], consistency_level: 'Strong',
    }));
    const byId = Object.fromEntries(q.data.map(r => [Number(r.id), r]));
    assert.deepEqual(asNumbers(byId[3].bits), BITS[3]);
    const half = byId[0].half;
    if (half.length === 4) {
      assert.deepEqual(asNumbers(half), HALF[0]);
    } else {
      assert.deepEqual(asNumbers(half), [0x00, 0x38, 0x00, 0xbd, 0x00, 0x40, 0x00, 0x00]);
    }

    const bad = await c.search({
      collection_name: name, data: [[255, 0]], anns_field: 'bits', limit: 1, metric_type: 'L2',
    });
    assert.notEqual(bad.status.error_code, 'Success');
  } finally {
    await c.dropCollection({ collection_name: name });
    await c.closeConnection();
  }
});
