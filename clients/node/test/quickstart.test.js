'use strict';
// The Milvus Node SDK against Strata: the same core flows as
// clients/python/test_quickstart.py.
const test = require('node:test');
const assert = require('node:assert/strict');
const { DataType, ErrorCode, LoadState } = require('@zilliz/milvus2-sdk-node');
const { DIM, newClient, newName, vectors, rows, ok } = require('./common');

const sortNum = a => [...a].map(Number).sort((x, y) => x - y);

test('quickstart: quick create, insert, search, query, get, delete, upsert, flush, drop', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({ collection_name: name, dimension: DIM }));
    assert.equal((await c.hasCollection({ collection_name: name })).value, true);
    const list = ok(await c.showCollections());
    assert.ok(list.data.some(x => x.name === name), 'listed');

    const desc = ok(await c.describeCollection({ collection_name: name }));
    assert.equal(desc.collection_name, name);
    assert.equal(desc.schema.enable_dynamic_field, true);
    assert.deepEqual(desc.schema.fields.map(f => f.name), ['id', 'vector']);
    const vec = desc.schema.fields.find(f => f.name === 'vector');
    assert.equal(vec.data_type, 'FloatVector');
    assert.equal(String(vec.dim), String(DIM));
    assert.equal(desc.schema.fields.find(f => f.name === 'id').is_primary_key, true);

    const ls = ok(await c.getLoadState({ collection_name: name }));
    assert.equal(ls.state, LoadState.LoadStateLoaded);

    const data = rows(10);
    const ins = ok(await c.insert({ collection_name: name, data }));
    assert.equal(Number(ins.insert_cnt), 10);
    assert.deepEqual(sortNum(ins.IDs.int_id.data), [...Array(10).keys()]);

    // search with output fields. Node reads the pk from fields_data, and Milvus 2.6
    // returns the pk there only when it is asked for by name or with "*".
    const s1 = ok(await c.search({
      collection_name: name, data: [data[0].vector], limit: 3,
      output_fields: ['id', 'color', 'n'], consistency_level: 'Strong',
    }));
    assert.equal(s1.results.length, 3);
    assert.equal(Number(s1.results[0].id), 0);
    assert.ok(Math.abs(s1.results[0].score - 1) < 1e-5, `cosine with itself: ${s1.results[0].score}`);
    assert.equal(s1.results[0].color, 'red');
    assert.equal(Number(s1.results[0].n), 0);

    // default output fields are ["*"]: every field, the pk, and the dynamic
    // keys (which Node hands back as one "$meta" object, as it does with Milvus)
    const sAll = ok(await c.search({
      collection_name: name, data: [data[4].vector], limit: 1, consistency_level: 'Strong',
    }));
    assert.equal(Number(sAll.results[0].id), 4);
    assert.deepEqual(sAll.results[0].$meta, { color: 'green', n: 4 });
    assert.equal(sAll.results[0].vector.length, DIM);

    // two queries with a filter
    const s2 = ok(await c.search({
      collection_name: name, data: [data[1].vector, data[2].vector], limit: 2,
      filter: 'color != "blue"', output_fields: ['id', 'color'], consistency_level: 'Strong',
    }));
    assert.equal(s2.results.length, 2);
    assert.equal(Number(s2.results[0][0].id), 1);
    for (const hits of s2.results) {
      assert.equal(hits.length, 2);
      for (const h of hits) assert.notEqual(h.color, 'blue');
    }

    const q = ok(await c.query({
      collection_name: name, filter: 'n >= 7', output_fields: ['id', 'color'], consistency_level: 'Strong',
    }));
    assert.deepEqual(sortNum(q.data.map(r => r.id)), [7, 8, 9]);
    // Node names query columns after fields_data, so dynamic keys come back under "$meta"
    assert.deepEqual(q.data.map(r => r.$meta.color).sort(), ['blue', 'green', 'red']);

    const g = ok(await c.get({ collection_name: name, ids: [2, 3], output_fields: ['vector', 'color'] }));
    assert.deepEqual(sortNum(g.data.map(r => r.id)), [2, 3]);
    assert.equal(g.data[0].vector.length, DIM);

    const d1 = ok(await c.delete({ collection_name: name, ids: [0, 1] }));
    assert.equal(Number(d1.delete_cnt), 2);
    const d2 = ok(await c.delete({ collection_name: name, filter: 'color == "blue"' }));
    assert.equal(Number(d2.delete_cnt), 3); // 2, 5, 8

    const up = ok(await c.upsert({
      collection_name: name, data: [{ id: 3, vector: data[3].vector, color: 'gold', n: 3 }],
    }));
    assert.equal(Number(up.upsert_cnt), 1);
    const g2 = ok(await c.get({
      collection_name: name, ids: [3], output_fields: ['color'], consistency_level: 'Strong',
    }));
    assert.equal(g2.data[0].$meta.color, 'gold');

    const cnt = ok(await c.query({
      collection_name: name, filter: '', output_fields: ['count(*)'], consistency_level: 'Strong',
    }));
    assert.equal(Number(cnt.data[0]['count(*)']), 5); // 3, 4, 6, 7, 9
    const cnt2 = ok(await c.count({ collection_name: name, expr: 'n > 5' })); // count takes expr, not filter
    assert.equal(Number(cnt2.data), 3); // 6, 7, 9

    const fl = await c.flushSync({ collection_names: [name] });
    assert.equal(fl.flushed, true);
    const stats = ok(await c.getCollectionStatistics({ collection_name: name }));
    assert.ok('row_count' in stats.data, JSON.stringify(stats));

    ok(await c.renameCollection({ collection_name: name, new_collection_name: name + '_r' }));
    assert.equal((await c.hasCollection({ collection_name: name })).value, false);
    assert.equal((await c.hasCollection({ collection_name: name + '_r' })).value, true);
    ok(await c.dropCollection({ collection_name: name + '_r' }));
    assert.equal((await c.hasCollection({ collection_name: name + '_r' })).value, false);
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('schema form with an Int64 pk, index_params, and search by L2', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.Int64, is_primary_key: true, autoID: false },
        { name: 'title', data_type: DataType.VarChar, max_length: 64 },
        { name: 'year', data_type: DataType.Int32 },
        { name: 'emb', data_type: DataType.FloatVector, dim: DIM },
      ],
      index_params: { field_name: 'emb', index_type: 'HNSW', metric_type: 'L2', params: { M: 8, efConstruction: 64 } },
    }));
    const desc = ok(await c.describeCollection({ collection_name: name }));
    assert.deepEqual(desc.schema.fields.map(f => [f.name, f.data_type]),
      [['pk', 'Int64'], ['title', 'VarChar'], ['year', 'Int32'], ['emb', 'FloatVector']]);
    assert.equal(desc.schema.enable_dynamic_field, false);
    assert.equal((await c.getLoadState({ collection_name: name })).state, LoadState.LoadStateLoaded);

    const vs = vectors(6, 7);
    const data = vs.map((v, i) => ({ pk: 1000 + i, title: `t${i}`, year: 2000 + i, emb: v }));
    const ins = ok(await c.insert({ collection_name: name, data }));
    assert.equal(Number(ins.insert_cnt), 6);

    const s = ok(await c.search({
      collection_name: name, data: vs[5], limit: 2, filter: 'year >= 2003',
      output_fields: ['pk', 'title', 'year'], params: { ef: 16 }, consistency_level: 'Strong',
    }));
    assert.equal(Number(s.results[0].pk), 1005);
    assert.ok(Math.abs(s.results[0].score) < 1e-5, `L2 to itself: ${s.results[0].score}`);
    assert.equal(s.results[0].title, 't5');
    assert.ok(s.results[0].score <= s.results[1].score, 'L2 ascending');

    const q = ok(await c.query({
      collection_name: name, filter: 'title in ["t1", "t2"]', output_fields: ['pk', 'year'], consistency_level: 'Strong',
    }));
    assert.deepEqual(sortNum(q.data.map(r => r.pk)), [1001, 1002]);

    // the insert with a missing field is rejected by the server, not silently accepted
    await assert.rejects(async () => ok(await c.insert({ collection_name: name, data: [{ pk: 1, emb: vs[0] }] })));
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('schema form with a VarChar pk: delete by ids, upsert, get', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({
      collection_name: name,
      fields: [
        { name: 'pk', data_type: DataType.VarChar, is_primary_key: true, max_length: 16 },
        { name: 'score', data_type: DataType.Double },
        { name: 'vec', data_type: DataType.FloatVector, dim: DIM },
      ],
      index_params: { field_name: 'vec', metric_type: 'IP' },
    }));
    const vs = vectors(4);
    const ins = ok(await c.insert({
      collection_name: name, data: vs.map((v, i) => ({ pk: `k${i}`, score: i / 2, vec: v })),
    }));
    assert.deepEqual([...ins.IDs.str_id.data].sort(), ['k0', 'k1', 'k2', 'k3']);
    assert.equal(Number((ok(await c.delete({ collection_name: name, ids: ['k0', 'k1'] }))).delete_cnt), 2);
    ok(await c.upsert({ collection_name: name, data: [{ pk: 'k2', score: 9.5, vec: vs[2] }] }));
    const q = ok(await c.query({
      collection_name: name, filter: 'score > 0', output_fields: ['pk', 'score'], consistency_level: 'Strong',
    }));
    assert.deepEqual(q.data.map(r => r.pk).sort(), ['k2', 'k3']);
    const g = ok(await c.get({ collection_name: name, ids: ['k2'], output_fields: ['score'] }));
    assert.equal(g.data[0].score, 9.5);
    const s = ok(await c.search({
      collection_name: name, data: [vs[3]], limit: 4, output_fields: ['pk'], consistency_level: 'Strong',
    }));
    assert.equal(s.results.length, 2);
    assert.equal(s.results[0].pk, 'k3');
    assert.ok(s.results[0].score >= s.results[1].score, 'IP descending');
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('partitions', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({ collection_name: name, dimension: DIM }));
    ok(await c.createPartition({ collection_name: name, partition_name: 'p1' }));
    assert.equal((await c.hasPartition({ collection_name: name, partition_name: 'p1' })).value, true);
    const parts = ok(await c.listPartitions({ collection_name: name }));
    assert.deepEqual(parts.data.map(p => p.name), ['_default', 'p1']);
    ok(await c.insert({ collection_name: name, partition_name: 'p1', data: rows(4) }));
    ok(await c.insert({ collection_name: name, data: rows(3, 100) }));
    const q = ok(await c.query({
      collection_name: name, filter: 'id >= 0', partition_names: ['p1'], output_fields: ['id'], consistency_level: 'Strong',
    }));
    assert.deepEqual(sortNum(q.data.map(r => r.id)), [0, 1, 2, 3]);
    const s = ok(await c.search({
      collection_name: name, data: [rows(3, 100)[0].vector], limit: 10, partition_names: ['_default'],
      output_fields: ['id'], consistency_level: 'Strong',
    }));
    assert.deepEqual(sortNum(s.results.map(r => r.id)), [100, 101, 102]);
    const ps = ok(await c.getPartitionStatistics({ collection_name: name, partition_name: 'p1' }));
    assert.ok('row_count' in ps.data);
    ok(await c.releasePartitions({ collection_name: name, partition_names: ['p1'] }));
    const bad = await c.dropPartition({ collection_name: name, partition_name: '_default' });
    assert.notEqual(bad.error_code, ErrorCode.SUCCESS);
    ok(await c.releaseCollection({ collection_name: name }));
    ok(await c.dropPartition({ collection_name: name, partition_name: 'p1' }));
    assert.equal((await c.hasPartition({ collection_name: name, partition_name: 'p1' })).value, false);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('indexes and load state', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({ collection_name: name, dimension: DIM }));
    const li = ok(await c.listIndexes({ collection_name: name }));
    assert.deepEqual(li.indexes, ['vector']);
    const di = ok(await c.describeIndex({ collection_name: name, index_name: 'vector' }));
    const params = Object.fromEntries(di.index_descriptions[0].params.map(p => [p.key, p.value]));
    assert.equal(params.metric_type, 'COSINE');
    assert.equal(di.index_descriptions[0].field_name, 'vector');
    assert.equal(di.index_descriptions[0].state, 'Finished');

    ok(await c.releaseCollection({ collection_name: name }));
    assert.equal((await c.getLoadState({ collection_name: name })).state, LoadState.LoadStateNotLoad);
    // reading a released collection fails with a status, not a transport error
    const notLoaded = await c.query({ collection_name: name, filter: 'id > 0', output_fields: ['id'] });
    assert.notEqual(notLoaded.status.error_code, ErrorCode.SUCCESS);
    assert.equal(notLoaded.status.code, 101);

    ok(await c.dropIndex({ collection_name: name, field_name: 'vector', index_name: 'vector' }));
    // with no index, DescribeIndex (and Node's listIndexes, built on it) answers 700 IndexNotExist
    const none = await c.listIndexes({ collection_name: name });
    assert.deepEqual(none.indexes, []);
    assert.equal(none.status.error_code, ErrorCode.IndexNotExist);
    assert.equal(none.status.code, 700);

    ok(await c.createIndex({
      collection_name: name, field_name: 'vector', index_name: 'vec_hnsw', index_type: 'HNSW', metric_type: 'L2',
      params: { M: 8, efConstruction: 64 },
    }));
    const di2 = ok(await c.describeIndex({ collection_name: name, index_name: 'vec_hnsw' }));
    const p2 = Object.fromEntries(di2.index_descriptions[0].params.map(p => [p.key, p.value]));
    assert.equal(p2.index_type, 'HNSW');
    assert.equal(p2.metric_type, 'L2');
    assert.deepEqual(ok(await c.listIndexes({ collection_name: name })).indexes, ['vec_hnsw']);

    ok(await c.loadCollectionSync({ collection_name: name }));
    assert.equal((await c.getLoadState({ collection_name: name })).state, LoadState.LoadStateLoaded);
    const prog = ok(await c.getLoadingProgress({ collection_name: name }));
    assert.equal(Number(prog.progress), 100);

    const data = rows(5);
    ok(await c.insert({ collection_name: name, data }));
    const s = ok(await c.search({
      collection_name: name, data: [data[4].vector], limit: 1, metric_type: 'L2', params: { ef: 16 },
      output_fields: ['id'],
      consistency_level: 'Strong',
    }));
    assert.equal(Number(s.results[0].id), 4);
    assert.ok(Math.abs(s.results[0].score) < 1e-5);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});

test('databases and errors', async () => {
  const admin = newClient();
  const db = newName('db_');
  const name = newName();
  let c;
  try {
    ok(await admin.createDatabase({ db_name: db }));
    assert.ok(ok(await admin.listDatabases()).db_names.includes(db));
    c = newClient({ database: db });
    ok(await c.createCollection({ collection_name: name, dimension: DIM }));
    ok(await c.insert({ collection_name: name, data: rows(2) }));
    const g = ok(await c.get({ collection_name: name, ids: [0, 1], consistency_level: 'Strong' }));
    assert.equal(g.data.length, 2);
    assert.equal((await admin.hasCollection({ collection_name: name })).value, false);
    assert.notEqual((await admin.dropDatabase({ db_name: db })).error_code, ErrorCode.SUCCESS); // not empty

    const missing = await admin.describeCollection({ collection_name: 'no_such_' + name });
    assert.equal(missing.status.code, 100);
    assert.equal(missing.status.error_code, 'CollectionNotExists');
    const dimBad = await c.insert({ collection_name: name, data: [{ id: 9, vector: [1, 2] }] });
    assert.notEqual(dimBad.status.error_code, ErrorCode.SUCCESS);

    ok(await c.dropCollection({ collection_name: name }));
    ok(await admin.dropDatabase({ db_name: db }));
    assert.ok(!ok(await admin.listDatabases()).db_names.includes(db));
  } finally {
    if (c) {
      await c.dropCollection({ collection_name: name }).catch(() => {});
      await c.closeConnection();
    }
    await admin.dropDatabase({ db_name: db }).catch(() => {});
    await admin.closeConnection();
  }
});

test('auto_id, filter templates (exprValues), query limit/offset', async () => {
  const c = newClient();
  const name = newName();
  try {
    ok(await c.createCollection({ collection_name: name, dimension: DIM, auto_id: true }));
    const data = rows(4).map(({ vector, color, n }) => ({ vector, color, n }));
    const ins = ok(await c.insert({ collection_name: name, data }));
    assert.equal(ins.IDs.int_id.data.length, 4);
    assert.equal(new Set(ins.IDs.int_id.data).size, 4);

    const q = ok(await c.query({
      collection_name: name, filter: 'n in {ns}', exprValues: { ns: [1, 2] }, output_fields: ['n'],
      consistency_level: 'Strong',
    }));
    assert.deepEqual(q.data.map(r => r.$meta.n).sort(), [1, 2]);
    assert.ok(q.data.every(r => ins.IDs.int_id.data.includes(r.id)), 'query returns the pk');

    const page = ok(await c.query({
      collection_name: name, filter: '', limit: 2, offset: 1, output_fields: ['n'], consistency_level: 'Strong',
    }));
    assert.equal(page.data.length, 2);

    const s = ok(await c.search({
      collection_name: name, data: [data[0].vector], filter: 'n >= {lo}', exprValues: { lo: 2 }, limit: 5,
      output_fields: ['id', 'n'], consistency_level: 'Strong',
    }));
    assert.deepEqual(s.results.map(r => r.n).sort(), [2, 3]);
    ok(await c.dropCollection({ collection_name: name }));
  } finally {
    await c.dropCollection({ collection_name: name }).catch(() => {});
    await c.closeConnection();
  }
});
