"""milvus_cli against the server that .ci/clients.sh starts with
STRATA_AUTHORIZATION_ENABLED=true (STRATA_AUTH_URI).

milvus_cli is a REPL: the suite pipes it one session of commands and reads
what it printed. It exits 0 whatever a command did, so every check is on
the output. Commands that prompt for their arguments (grant privilege,
delete user) read the terminal, not the pipe, and are not driven here.
"""

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

AUTH_URI = os.environ.get("STRATA_AUTH_URI", "")
CLI = Path(sys.executable).with_name("milvus_cli")


def session(*commands):
    """Runs milvus_cli on commands (then exit) and returns what it printed,
    prompt echoes and blank lines left out."""
    assert AUTH_URI, "STRATA_AUTH_URI is not set (.ci/clients.sh starts the auth server)"
    script = "\n".join([*commands, "exit"]) + "\n"
    out = subprocess.run([str(CLI)], input=script, capture_output=True, text=True, timeout=120, check=True)
    lines = []
    for line in (out.stdout + out.stderr).splitlines():
        line = re.sub(r"\s*milvus_cli > .*", "", line).rstrip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def connect(token="root:Milvus"):
    return f"connect -uri {AUTH_URI} -t {token}"


@pytest.fixture()
def names():
    suffix = uuid.uuid4().hex[:8]
    return "cliu_" + suffix, "clir_" + suffix


def test_list_users_roles_and_grants(names):
    user, role = names
    out = session(
        connect(),
        "list users",
        f"create user -u {user} -p cli-password",
        f"create role -r {role}",
        f"grant role -r {role} -u {user}",
        "list users",
        "list roles",
        f"show user -u {user}",
        f"list grants -r {role}",
        "list databases",
    )
    assert "Connect Milvus successfully." in out, out
    assert "['root']" in out or "'root'" in out, out
    assert "Create user successfully!" in out, out
    assert "Create role successfully!" in out, out
    assert re.search(rf"\[.*'{user}'.*'root'.*\]", out), out  # list users after create
    assert re.search(rf"\|\s+{role}\s+\|", out), out  # list roles
    assert re.search(rf"'user_name': '{user}', 'roles': \('{role}',\)", out), out  # show user
    assert "| Object | Object Name | DB Name | Role Name | Grantor Name | Privilege |" in out, out
    assert "| default  |" in out, out  # list databases
    assert "error" not in out.lower(), out

    out = session(
        connect(),
        f"revoke role -r {role} -u {user}",
        f"show user -u {user}",
        f"delete role -r {role}",
        "list roles",
    )
    assert re.search(rf"'user_name': '{user}', 'roles': \(\)", out), out
    assert not re.search(rf"\|\s+{role}\s+\|", out), out
    assert "error" not in out.lower(), out


def test_wrong_password_refused():
    out = session(connect("root:not-the-password"), "list users")
    assert "Connect to Milvus error!" in out, out
    assert "List users error!Not connected to Milvus!" in out, out


def test_user_without_privilege_denied(names):
    user, _ = names
    out = session(connect(), f"create user -u {user} -p cli-password")
    assert "Create user successfully!" in out, out
    out = session(connect(f"{user}:cli-password"), "list users")
    assert "Connect Milvus successfully." in out, out
    assert "PrivilegeSelectOwnership: permission deny to " + user in out, out
