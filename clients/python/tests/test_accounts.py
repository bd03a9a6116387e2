"""The ``account`` option (``Sluice-Account``) against a real server with two accounts' tokens:
A is the server's own account (the operator's), B another. An operator client made with
``account=B`` works B's queues and jobs — submits, reads, lists, a worker's leases and
completions, the worker CLI's ``--account`` — and a B token naming A is AccessDenied (403)."""
from __future__ import annotations

import asyncio
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

from support import Process, SluiceServer
from sluice_client import AsyncSluice, Sluice, SluiceApiError

ACCOUNT_A = "111111111111"
ACCOUNT_B = "222222222222"
TOKEN_A = "tok-py-operator-0123456789abcdef"
TOKEN_B = "tok-py-tenant-b-0123456789abcdef"
CREDENTIALS = f"""
[[tokens]]
name = "operator"
token = "{TOKEN_A}"
accountId = "{ACCOUNT_A}"

[[tokens]]
name = "tenant-b"
token = "{TOKEN_B}"
accountId = "{ACCOUNT_B}"
"""


@pytest.fixture(scope="module")
def accounts_server() -> Iterator[SluiceServer]:
    data_dir = Path(tempfile.mkdtemp(prefix="sluice-py-accounts-"))
    credentials = data_dir.parent / f"{data_dir.name}.toml"
    credentials.write_text(CREDENTIALS)
    srv = SluiceServer(data_dir, ["--credentials-file", str(credentials), "--account-id", ACCOUNT_A]).start()
    yield srv
    srv.kill()
    shutil.rmtree(data_dir, ignore_errors=True)
    credentials.unlink()


@pytest.mark.spec("account")
def test_an_operator_client_with_account_works_the_accounts_queue_and_another_token_naming_a_is_denied(accounts_server: SluiceServer, queue_name: str) -> None:
    url = accounts_server.url
    operator_as_b = Sluice(url, TOKEN_A, account=ACCOUNT_B, batch_submits=False)
    tenant = Sluice(url, TOKEN_B)
    operator = Sluice(url, TOKEN_A)

    job = operator_as_b.queue(queue_name).submit({"n": 3})
    # The job is B's: B's own token reads it, the operator without the account does not.
    assert tenant.jobs.get(job.id).input == {"n": 3}
    with pytest.raises(SluiceApiError) as missing:
        operator.jobs.get(job.id)
    assert (missing.value.code, missing.value.status) == ("JobNotFound", 404)
    assert [j.id for j in operator_as_b.queue(queue_name).list()] == [job.id]

    # A worker of the operator's, acting as B, leases and completes B's job.
    with operator_as_b.queue(queue_name).work(lambda j: {"doubled": j.input["n"] * 2}):
        done = operator_as_b.jobs.wait(job.id, timeout=30)
    assert (done.status, done.output) == ("succeeded", {"doubled": 6})

    async def through_asyncio() -> str:
        async with AsyncSluice(url, TOKEN_A, account=ACCOUNT_B) as client:
            return (await client.jobs.get(job.id)).status

    assert asyncio.run(through_asyncio()) == "succeeded"

    tenant_as_a = Sluice(url, TOKEN_B, account=ACCOUNT_A, batch_submits=False)
    for attempt in (lambda: tenant_as_a.queue(queue_name).submit({"n": 4}), lambda: tenant_as_a.jobs.get(job.id)):
        with pytest.raises(SluiceApiError) as denied:
            attempt()
        assert (denied.value.code, denied.value.status) == ("AccessDenied", 403)
    assert Sluice(url, TOKEN_B, account=ACCOUNT_B).jobs.get(job.id).id == job.id
    with pytest.raises(ValueError, match="12-digit"):
        Sluice(url, TOKEN_A, account="2222")


def test_the_worker_cli_works_another_accounts_queue_with_account(accounts_server: SluiceServer, queue_name: str, workers: Callable[..., Process]) -> None:
    tenant = Sluice(accounts_server.url, TOKEN_B)
    job = tenant.queue(queue_name).submit({"n": 5})
    worker = workers(accounts_server.url, "handlers:record", queue_name, "--token", TOKEN_A, "--account", ACCOUNT_B)
    done = tenant.jobs.wait(job.id, timeout=30)
    assert (done.status, done.output["doubled"]) == ("succeeded", 10)
    worker.signal(signal.SIGTERM)
    assert worker.wait() == 0
