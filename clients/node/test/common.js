'use strict';
// Shared helpers for the Node SDK suite. The server is started by
// .ci/clients.sh, which exports STRATA_URI (for example http://127.0.0.1:19530).
const crypto = require('node:crypto');
const { MilvusClient } = require('@zilliz/milvus2-sdk-node');

const URI = process.env.STRATA_URI || 'http://127.0.0.1:19530';
const ADDRESS = URI.replace(/^https?:\/\//, '');
const DIM = 5;

function newClient(extra = {}) {
  return new MilvusClient({ address: ADDRESS, logLevel: 'error', ...extra });
}

function newName(prefix = 'n_') {
  return prefix + crypto.randomBytes(6).toString('hex');
}

// A small deterministic PRNG (mulberry32), so vectors are the same on every run.
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

function vectors(n, seed = 1) {
  const r = rng(seed);
  return Array.from({ length: n }, () => Array.from({ length: DIM }, () => r() * 2 - 1));
}

const COLORS = ['red', 'green', 'blue'];

function rows(n, start = 0, seed = 1) {
  return vectors(n, seed).map((v, i) => ({
    id: start + i,
    vector: v,
    color: COLORS[(start + i) % 3],
    n: start + i,
  }));
}

// Throws with the server's reason unless the status is Success.
function ok(res) {
  const status = res && res.status ? res.status : res;
  if (!status || status.error_code !== 'Success' || (status.code && status.code !== 0)) {
    throw new Error(`not Success: ${JSON.stringify(status)}`);
  }
  return res;
}

module.exports = { URI, ADDRESS, DIM, newClient, newName, vectors, rows, ok };
