"""Fixtures for the framework suites (LangChain, LlamaIndex): the server is
started by .ci/clients.sh, which exports STRATA_URI."""

import os
import uuid

import pytest

URI = os.environ.get("STRATA_URI", "http://127.0.0.1:19530")


@pytest.fixture(scope="session")
def uri():
    return URI


@pytest.fixture()
def name():
    """A fresh collection name per test."""
    return "f_" + uuid.uuid4().hex[:12]
