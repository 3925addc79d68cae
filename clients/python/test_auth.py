"""Authentication and RBAC through pymilvus and REST v2, against the server
that .ci/clients.sh starts with STRATA_AUTHORIZATION_ENABLED=true
(STRATA_AUTH_URI)."""

import os
import uuid

import grpc
import pytest
import requests
from pymilvus import MilvusClient, MilvusException

AUTH_URI = os.environ.get("STRATA_AUTH_URI", "")


@pytest.fixture()
def auth_uri():
    assert AUTH_URI, "STRATA_AUTH_URI is not set (.ci/clients.sh starts the auth server)"
    return AUTH_URI


@pytest.fixture()
def root(auth_uri):
    c = MilvusClient(uri=auth_uri, token="root:Milvus")
    yield c
    c.close()


def unique(prefix):
    return prefix + uuid.uuid4().hex[:10]


def test_users_roles_grants(root, auth_uri):
    user, role, coll = unique("u_"), unique("r_"), unique("c_")
    root.create_collection(coll, dimension=4)
    root.create_user(user_name=user, password="user-password")
    root.create_role(role_name=role)
    root.grant_role(user_name=user, role_name=role)
    try:
        assert {"root", user} <= set(root.list_users())
        assert root.describe_user(user_name=user)["roles"] == (role,)
        assert role in root.list_roles()

        alice = MilvusClient(uri=auth_uri, user=user, password="user-password")
        try:
            # pymilvus passes an interceptor's refusal on as the gRPC error (as with Milvus).
            with pytest.raises(grpc.RpcError) as e:
                alice.query(coll, filter="id > 0", limit=1)
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert e.value.details() == f"PrivilegeQuery: permission deny to {user} in the `default` database"
            alice.describe_collection(coll)  # the public role's defaults

            root.grant_privilege(role, "Collection", "Query", coll)
            grants = root.describe_role(role)["privileges"]
            assert [(g["object_type"], g["object_name"], g["db_name"], g["privilege"]) for g in grants] == [
                ("Collection", coll, "default", "Query")
            ]
            assert alice.query(coll, filter="id > 0", limit=1) == []
            with pytest.raises(grpc.RpcError, match="PrivilegeDropCollection: permission deny"):
                alice.drop_collection(coll)

            root.grant_privilege_v2(role, "DatabaseAdmin", "*", db_name="default")
            alice.drop_collection(coll)
            root.revoke_privilege_v2(role, "DatabaseAdmin", "*", db_name="default")
            # Milvus's test teardown: revoke every grant as describe_role lists it.
            for g in root.describe_role(role)["privileges"]:
                root.revoke_privilege(role, g["object_type"], g["privilege"], g["object_name"], db_name=g["db_name"])
            assert root.describe_role(role)["privileges"] == []

            alice.update_password(user, "user-password", "user-password-2")
        finally:
            alice.close()
        MilvusClient(uri=auth_uri, user=user, password="user-password-2").close()
    finally:
        root.revoke_role(user_name=user, role_name=role)
        root.drop_role(role_name=role)
        root.drop_user(user_name=user)
        root.drop_collection(coll)


@pytest.mark.parametrize("token", ["root:not-the-password", "nobody_at_all:Milvus"])
def test_wrong_credentials_refused(auth_uri, token):
    # pymilvus words every refused connect so (as it does with Milvus); the
    # cause is the server's UNAUTHENTICATED "auth check failure".
    with pytest.raises(MilvusException, match="Fail connecting to server") as e:
        MilvusClient(uri=auth_uri, token=token)
    cause = e.value.__cause__
    assert isinstance(cause, grpc.RpcError)
    assert cause.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "auth check failure" in cause.details()


def test_root_cannot_be_dropped(root):
    with pytest.raises(MilvusException, match="root user cannot be deleted"):
        root.drop_user(user_name="root")


def rest(uri, path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    r = requests.post(f"{uri.rstrip('/')}/v2/vectordb/{path}", json=body, headers=headers, timeout=30)
    return r.status_code, r.json()


def test_rest_v2_bearer(auth_uri):
    status, out = rest(auth_uri, "users/list", {}, "root:Milvus")
    assert status == 200 and out["code"] == 0, out
    assert "root" in out["data"]
    for token in (None, "root:wrong", "nobody_at_all:Milvus"):
        status, out = rest(auth_uri, "users/list", {}, token)
        assert status == 401, (token, out)
        assert out["code"] == 1800, (token, out)

    user, role = unique("u_"), unique("r_")
    assert rest(auth_uri, "users/create", {"userName": user, "password": "user-password"}, "root:Milvus")[1]["code"] == 0
    try:
        status, out = rest(auth_uri, "roles/create", {"roleName": role}, f"{user}:user-password")
        assert status == 403, out
        assert f"PrivilegeCreateOwnership: permission deny to {user}" in out["message"]
        assert rest(auth_uri, "roles/create", {"roleName": role}, "root:Milvus")[1]["code"] == 0
        _, out = rest(auth_uri, "roles/list", {}, "root:Milvus")
        assert role in out["data"]
        assert rest(auth_uri, "roles/drop", {"roleName": role}, "root:Milvus")[1]["code"] == 0
    finally:
        rest(auth_uri, "users/drop", {"userName": user}, "root:Milvus")
