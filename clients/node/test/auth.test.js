'use strict';
// Authentication and RBAC through the Node SDK, against the server that
// .ci/clients.sh starts with STRATA_AUTHORIZATION_ENABLED=true (STRATA_AUTH_URI).
const test = require('node:test');
const assert = require('node:assert/strict');
const { MilvusClient } = require('@zilliz/milvus2-sdk-node');
const { DIM, newName, ok } = require('./common');

const AUTH_URI = process.env.STRATA_AUTH_URI;
const ADDRESS = (AUTH_URI || '').replace(/^https?:\/\//, '');

function client(username, password, extra = {}) {
  return new MilvusClient({ address: ADDRESS, username, password, logLevel: 'error', ...extra });
}

// The gRPC status of a refused call: the SDK throws it for an interceptor's refusal.
async function refused(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('the call was not refused');
}

test('auth: root logs in, manages users and roles; a grant turns a denial into an answer', async () => {
  assert.ok(AUTH_URI, 'STRATA_AUTH_URI is not set (.ci/clients.sh starts the auth server)');
  const root = client('root', 'Milvus');
  const user = newName('u_');
  const role = newName('r_');
  const coll = newName('c_');
  try {
    ok(await root.createCollection({ collection_name: coll, dimension: DIM }));
    ok(await root.createUser({ username: user, password: 'user-password' }));
    ok(await root.createRole({ roleName: role }));
    ok(await root.addUserToRole({ username: user, roleName: role }));
    const users = ok(await root.listUsers());
    assert.ok(users.usernames.includes('root') && users.usernames.includes(user), JSON.stringify(users.usernames));
    const desc = ok(await root.describeUser({ username: user, includeRoleInfo: true }));
    assert.deepEqual(desc.results[0].roles.map(r => r.name), [role]);

    const alice = client(user, 'user-password');
    try {
      // No grant: Milvus's PERMISSION_DENIED (gRPC code 7) and message.
      const e = await refused(alice.query({ collection_name: coll, filter: 'id > 0', limit: 1 }));
      assert.equal(e.code, 7, String(e));
      assert.match(e.message, /PrivilegeQuery: permission deny to u_\w+ in the `default` database/);
      // The public role's default grants: everyone may describe a collection.
      ok(await alice.describeCollection({ collection_name: coll }));

      ok(await root.grantRolePrivilege({ roleName: role, object: 'Collection', objectName: coll, privilegeName: 'Query' }));
      const grants = ok(await root.listGrants({ roleName: role }));
      assert.deepEqual(grants.entities.map(g => [g.object.name, g.object_name, g.db_name, g.grantor.privilege.name]),
        [['Collection', coll, 'default', 'Query']]);
      ok(await alice.query({ collection_name: coll, filter: 'id > 0', limit: 1 }));
      // Still no other privilege.
      const e2 = await refused(alice.dropCollection({ collection_name: coll }));
      assert.match(e2.message, /PrivilegeDropCollection: permission deny/);

      // V2 grant of a built-in group at database level.
      ok(await root.grantPrivilegeV2({ role, privilege: 'DatabaseAdmin', db_name: 'default', collection_name: '*' }));
      ok(await alice.dropCollection({ collection_name: coll }));
      ok(await root.revokePrivilegeV2({ role, privilege: 'DatabaseAdmin', db_name: 'default', collection_name: '*' }));
    } finally {
      await alice.closeConnection();
    }

    // A wrong password or an unknown user is refused when the SDK connects.
    for (const [u, p] of [['root', 'not-the-password'], ['nobody_' + user, 'Milvus']]) {
      const bad = client(u, p);
      try {
        const e = await refused(bad.connectPromise);
        assert.equal(e.code, 16, String(e));
        assert.match(e.message, /auth check failure/);
      } finally {
        await bad.closeConnection();
      }
    }
    // Nobody can delete root.
    const del = await root.deleteUser({ username: 'root' });
    assert.notEqual(del.error_code, 'Success');
    assert.match(del.reason, /root user cannot be deleted/);
  } finally {
    await root.revokeRolePrivilege({ roleName: role, object: 'Collection', objectName: coll, privilegeName: 'Query' });
    await root.removeUserFromRole({ username: user, roleName: role });
    await root.dropRole({ roleName: role });
    await root.deleteUser({ username: user });
    await root.dropCollection({ collection_name: coll });
    await root.closeConnection();
  }
});
