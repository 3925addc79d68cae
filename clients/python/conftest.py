"""Fixtures for the client suites: the server is started by .ci/clients.sh,
which exports STRATA_URI (for example http://127.0.0.1:19530)."""

import os
import uuid

import pytest
from pymilvus import MilvusClient

URI = os.environ.get("STRATA_URI", "http://127.0.0.1:19530")


@pytest.fixture(scope="session")
def uri():
    return URI


@pytest.fixture()
def client():
    c = MilvusClient(uri=URI)
    yield c
    c.close()


@pytest.fixture()
def name():
    """A fresh collection name per test."""
    return "c_" + uuid.uuid4().hex[:12]
