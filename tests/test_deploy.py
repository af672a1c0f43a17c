"""Past one machine, by configuration only: the executor chosen by TRECHO_EXECUTOR (a
missing extra fails the code location's load, naming it), the run config examples in
deploy/run_config/, the index job on a real Dask cluster, and a real Postgres server
behind the Dagster instance written from deploy/dagster.yaml.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    validate_run_config,
)

from rag_assets.cli import main
from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake
from rag_assets.core.request import SearchRequest
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.executors import (
    ExecutorConfigError,
    executor_env_defaults,
    select_executor,
)
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.settings import Settings, SettingsError

from .conftest import REPO, moto_s3

# slow: Dask clusters and a PostgreSQL server
pytestmark = pytest.mark.slow

DEPLOY = REPO / "deploy"
KEY = "regulamento-ruido@v1"
QUESTION = "Qual o limite de ruído na sala de máquinas?"
CHAIN = ["raw_pdf", "page_text", "structure_tree", "linearized_tables", "chunks", "embeddings"]
EXTRAS = {"dask": "dagster_dask", "celery": "dagster_celery", "k8s": "dagster_k8s"}
ENV_KEYS = (
    "TRECHO_EXECUTOR",
    "TRECHO_MAX_CONCURRENT",
    "TRECHO_DASK_ADDRESS",
    "TRECHO_DASK_WORKERS",
    "TRECHO_CELERY_BROKER",
    "TRECHO_CELERY_BACKEND",
    "TRECHO_K8S_NAMESPACE",
    "TRECHO_K8S_IMAGE",
)


@pytest.fixture(autouse=True)
def clean_executor_env(monkeypatch) -> None:
    """No executor setting leaks in from the shell running the tests."""
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def one_doc_lake(tmp_path: Path, make_pdf) -> Lake:
    """A lake with one small generated regulation, one version."""
    make_pdf(
        tmp_path / "lake" / "raw" / "regulamento-ruido" / "v1.pdf",
        [
            ("Regulamento de Ruído", 18, True),
            ("Art. 1º O limite de ruído na sala de máquinas é de 85 dB.", 11, False),
            ("Art. 2º Acima do limite, o uso de protetor auricular é obrigatório.", 11, False),
        ],
    )
    return Lake(tmp_path / "lake")


def assert_searchable(lake: Lake, embedder) -> None:
    """The version is in the index, and search answers from it."""
    index = Index(lake.lancedb_dir, embedder)
    assert set(index.partition_counts()) == {KEY}
    assert "85 dB" in index.search(SearchRequest(query=QUESTION, k=1))[0].text


def dagster_home(path: Path, config: str) -> Path:
    """A DAGSTER_HOME folder whose dagster.yaml is `config`."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "dagster.yaml").write_text(config, encoding="utf-8")
    return path


# -- the executor, by configuration -------------------------------------------------------


@pytest.mark.parametrize("name", ["multiprocess", "in_process", "dask", "celery", "k8s"])
def test_the_executor_is_chosen_by_trecho_executor(name: str, monkeypatch) -> None:
    if name in EXTRAS:
        pytest.importorskip(EXTRAS[name], reason=f"extra {name!r} not installed")
    monkeypatch.setenv("TRECHO_EXECUTOR", name)
    job = build_definitions().resolve_job_def("index_documents")
    assert job.executor_def.name == name
    validate_run_config(job, {})  # every executor runs with no run config at all


def test_the_default_is_in_process_and_multiprocess_keeps_its_max_concurrent(
    monkeypatch,
) -> None:
    # a version's steps are a chain: one process per run, not one per step
    for job_name in ("index_documents", "embed_documents"):
        job = build_definitions().resolve_job_def(job_name)
        assert job.executor_def.name == "in_process"
    monkeypatch.setenv("TRECHO_EXECUTOR", "multiprocess")
    job = build_definitions().resolve_job_def("index_documents")
    assert job.executor_def.name == "multiprocess"
    monkeypatch.setenv("TRECHO_MAX_CONCURRENT", "3")
    job = build_definitions().resolve_job_def("index_documents")
    assert validate_run_config(job, {})["execution"]["multiprocess"]["max_concurrent"] == 3
    # the environment gives defaults: run config still overrides them
    config = {"execution": {"config": {"max_concurrent": 1}}}
    assert validate_run_config(job, config)["execution"]["multiprocess"]["max_concurrent"] == 1
    job = build_definitions(max_concurrent=2).resolve_job_def("index_documents")
    assert validate_run_config(job, {})["execution"]["multiprocess"]["max_concurrent"] == 2


def test_executor_settings_come_from_the_environment(monkeypatch) -> None:
    def defaults(name: str) -> dict:
        return executor_env_defaults(Settings.from_env(), name)

    assert defaults("dask") == {"cluster": {"local": {}}}
    monkeypatch.setenv("TRECHO_DASK_WORKERS", "2")
    assert defaults("dask") == {"cluster": {"local": {"n_workers": 2}}}
    monkeypatch.setenv("TRECHO_DASK_ADDRESS", "tcp://scheduler:8786")
    existing = {"cluster": {"existing": {"address": "tcp://scheduler:8786"}}}
    assert defaults("dask") == existing
    monkeypatch.setenv("TRECHO_CELERY_BROKER", "redis://user:secret@redis:6379/0")
    # an env reference, resolved when the run starts: the password never reaches the UI
    assert defaults("celery") == {"broker": {"env": "TRECHO_CELERY_BROKER"}}
    monkeypatch.setenv("TRECHO_K8S_NAMESPACE", "trecho")
    monkeypatch.setenv("TRECHO_MAX_CONCURRENT", "4")
    assert defaults("k8s") == {"job_namespace": "trecho", "max_concurrent": 4}
    monkeypatch.setenv("TRECHO_MAX_CONCURRENT", "many")
    with pytest.raises(SettingsError, match="TRECHO_MAX_CONCURRENT='many': expected a whole"):
        build_definitions()  # what the code location runs when it loads


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_a_missing_extra_fails_the_load_naming_what_to_install(name: str, monkeypatch) -> None:
    package = EXTRAS[name]
    for module in [m for m in sys.modules if m.split(".")[0] == package] or [package]:
        monkeypatch.setitem(sys.modules, module, None)  # its import fails, as if absent
    monkeypatch.setenv("TRECHO_EXECUTOR", name)
    with pytest.raises(ExecutorConfigError) as error:
        build_definitions()  # what `defs = build_definitions()` runs when the location loads
    assert f"pip install 'trecho[{name}]'" in str(error.value)


def test_an_unknown_executor_fails_the_load_listing_the_choices(monkeypatch) -> None:
    monkeypatch.setenv("TRECHO_EXECUTOR", "ray")
    with pytest.raises(SettingsError, match="multiprocess, in_process, dask, celery, k8s"):
        build_definitions()
    with pytest.raises(ExecutorConfigError, match="multiprocess, in_process, dask, celery, k8s"):
        select_executor(Settings(), "ray")


@pytest.mark.parametrize(
    "path", sorted((DEPLOY / "run_config").glob("*.yaml")), ids=lambda p: p.name
)
def test_the_run_config_examples_are_valid(path: Path, monkeypatch) -> None:
    name = path.stem if path.stem in EXTRAS else "multiprocess"
    if name in EXTRAS:
        pytest.importorskip(EXTRAS[name], reason=f"extra {name!r} not installed")
    monkeypatch.setenv("TRECHO_CELERY_BROKER", "redis://localhost:6379/0")
    monkeypatch.setenv("TRECHO_CELERY_BACKEND", "redis://localhost:6379/1")
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    job = build_definitions(executor=name).resolve_job_def("index_documents")
    validate_run_config(job, config)


# -- a real Dask cluster ------------------------------------------------------------------


def execute_cmd(key: str) -> list[str]:
    """`dagster job execute` of the index job for one version, as a deployment runs it."""
    return [
        str(Path(sys.executable).with_name("dagster")),
        *("job", "execute", "-m", "rag_assets.definitions", "-a", "defs", "-j", "index_documents"),
        *("--tags", json.dumps({"dagster/partition": key})),
    ]


def test_the_index_job_runs_its_steps_on_a_dask_cluster(
    one_doc_lake: Lake, tmp_path: Path, embedder, monkeypatch
) -> None:
    try:
        from dask.distributed import Client, LocalCluster, get_task_stream
    except ImportError as exc:  # CI installs it: a missing extra is a failure, not a skip
        pytest.fail(f"dask is not installed: pip install -e '.[dev,dask]' ({exc})")
    lake = one_doc_lake
    home = dagster_home(tmp_path / "dagster_home", "telemetry:\n  enabled: false\n")
    # the environment a cluster deployment gives every process, Dask workers included
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("TRECHO_LAKE", str(lake.root))
    monkeypatch.setenv("TRECHO_EXECUTOR", "dask")
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
        with (
            LocalCluster(
                n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            worker_pids = set(client.run(os.getpid).values())
            # the run as `dagster job execute` (or a run worker) starts it: the code location
            # loads with TRECHO_EXECUTOR=dask and finds the scheduler in TRECHO_DASK_ADDRESS
            with get_task_stream(client) as stream:
                done = subprocess.run(
                    execute_cmd(KEY),
                    env={**os.environ, "TRECHO_DASK_ADDRESS": cluster.scheduler_address},
                    cwd=REPO,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        (run,) = instance.get_runs()
        assert run.status == DagsterRunStatus.SUCCESS and run.tags["dagster/partition"] == KEY
        starts = instance.get_records_for_run(
            run_id=run.run_id, of_type=DagsterEventType.STEP_START
        ).records
        pids = {r.event_log_entry.step_key: r.event_log_entry.dagster_event.pid for r in starts}
    assert set(CHAIN) <= set(pids)
    assert set(pids.values()) <= worker_pids, "a step ran outside the Dask worker"
    # one Dask task per step, keyed by run: runs of the same job never share a task
    tasks = {task["key"] for task in stream.data}
    assert {f"index_documents.{step}.{run.run_id}" for step in CHAIN} <= tasks
    assert_searchable(lake, embedder)


# -- a real Postgres server behind the instance --------------------------------------------

PG_PACKAGE = "postgresql"


@dataclass
class Postgres:
    """A running server: where it listens and who may log in."""

    port: int
    user: str = "trecho"
    password: str = "trecho-test-password"
    db: str = "dagster"
    host: str = "127.0.0.1"

    def env(self) -> dict[str, str]:
        """The variables deploy/dagster.yaml reads."""
        return {
            "DAGSTER_PG_HOST": self.host,
            "DAGSTER_PG_PORT": str(self.port),
            "DAGSTER_PG_USER": self.user,
            "DAGSTER_PG_PASSWORD": self.password,
            "DAGSTER_PG_DB": self.db,
        }

    def connect(self, db: str | None = None):
        """A psycopg2 connection, by TCP with the password (as Dagster connects)."""
        import psycopg2

        return psycopg2.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            dbname=db or self.db,
        )


def postgres_bin() -> Path:
    """The newest PostgreSQL server's bin folder; a clear failure when there is none."""
    found = glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
    if not found:
        pytest.fail(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: install "
            f"the Debian package `{PG_PACKAGE}` "
            f"(apt-get install -y --no-install-recommends {PG_PACKAGE})"
        )
    newest = max(found, key=lambda p: float(Path(p).parts[-3]))
    return Path(newest).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def postgres() -> Iterator[Postgres]:
    """A throwaway Postgres server in a temp folder, on a free port, unix socket in that
    folder. Postgres refuses to run as root, so as root the server runs as `nobody`."""
    bin_dir = postgres_bin()
    try:
        import psycopg2  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"psycopg2 is missing: pip install -e '.[dev,postgres]' ({exc})")
    server = Postgres(port=free_port())
    root = Path(tempfile.mkdtemp(prefix="trecho-pg-"))  # not under pytest's 0700 root
    as_user: list[str] = []
    password = root / "password"
    password.write_text(server.password, encoding="utf-8")
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "nobody", "--"]
        for path in (root, password):
            shutil.chown(path, user="nobody")
    data = root / "data"

    def pg(*args: str, check: bool = True) -> None:
        done = subprocess.run(
            [*as_user, *args], capture_output=True, text=True, timeout=120, cwd=root
        )
        if check and done.returncode != 0:
            log = root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise AssertionError(f"{args[0]} failed: {done.stdout}{done.stderr}{tail}")

    try:
        pg(
            str(bin_dir / "initdb"),
            *("-D", str(data), "-U", server.user, "--pwfile", str(password)),
            *("--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale"),
            "--no-sync",
        )
        options = f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
        pg(
            str(bin_dir / "pg_ctl"),
            *("-D", str(data), "-l", str(root / "server.log"), "-o", options, "-w", "start"),
        )
        conn = server.connect(db="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {server.db}")
        conn.close()
        yield server
    finally:
        if data.exists():
            pg(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(root, ignore_errors=True)


def step_logs(instance: DagsterInstance, run_id: str) -> dict[str, str]:
    """Each step's captured stdout and stderr, as the instance's webserver reads them."""
    manager = instance.compute_log_manager
    logs: dict[str, str] = {}
    records = instance.get_records_for_run(
        run_id=run_id, of_type=DagsterEventType.LOGS_CAPTURED
    ).records
    for record in records:
        captured = record.event_log_entry.dagster_event.event_specific_data
        data = manager.get_log_data([run_id, "compute_logs", captured.file_key])
        text = b"".join(part or b"" for part in (data.stdout, data.stderr))
        for step in captured.step_keys:
            logs[step] = logs.get(step, "") + text.decode("utf-8", "replace")
    return logs


def test_the_deploy_instance_keeps_runs_events_and_step_logs_where_every_host_reads_them(
    postgres: Postgres, one_doc_lake: Lake, tmp_path: Path, embedder, monkeypatch
) -> None:
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    lake = one_doc_lake
    deploy_yaml = (DEPLOY / "dagster.yaml").read_text()
    home = dagster_home(tmp_path / "webserver" / "dagster_home", deploy_yaml)
    for name, value in postgres.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DAGSTER_COMPUTE_LOG_BUCKET", "trecho-logs")
    with moto_s3("trecho-logs"), DagsterInstance.get() as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        queue = instance.get_concurrency_config().run_queue_config
        assert queue.max_concurrent_runs == 4
        assert {limit["key"] for limit in queue.tag_concurrency_limits} == {
            "dagster/partition",
            "dagster/backfill",
        }
        instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
        # the run on another host: its own DAGSTER_HOME (a copy of the same yaml), HOME
        # and temp folder; it shares only Postgres, the bucket and the lake
        worker = tmp_path / "worker"
        worker_home = dagster_home(worker / "dagster_home", deploy_yaml)
        (worker / "tmp").mkdir()
        done = subprocess.run(
            execute_cmd(KEY),
            env={
                **os.environ,
                "DAGSTER_HOME": str(worker_home),
                "HOME": str(worker),
                "TMPDIR": str(worker / "tmp"),
                "TRECHO_LAKE": str(lake.root),
            },
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        (run,) = instance.get_runs()
        assert run.status == DagsterRunStatus.SUCCESS
        for asset in CHAIN:
            records = instance.fetch_materializations(
                AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[KEY]), limit=5
            ).records
            assert len(records) == 1, asset
        # the step's log lines, written on the other host, read from this one's instance
        logs = step_logs(instance, run.run_id)
        assert f"{KEY}: policy chose" in logs.get("chunks", ""), logs
        # `trecho materialize` on a deployment's instance points at its webserver, not at
        # a `trecho ui` on this machine
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        (ui,) = [x for x in out.getvalue().splitlines() if x.startswith("Open the Dagster UI")]
        assert "deployment's webserver" in ui and "trecho ui" not in ui and ":3000" not in ui

    # and it is all in Postgres itself, nowhere under either DAGSTER_HOME
    conn = postgres.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT run_id, status FROM runs")
            assert cur.fetchall() == [(run.run_id, "SUCCESS")]
            cur.execute(
                "SELECT asset_key FROM event_logs WHERE run_id = %s "
                "AND dagster_event_type = 'ASSET_MATERIALIZATION'",
                (run.run_id,),
            )
            keys = {json.loads(row[0])[0] for row in cur.fetchall()}  # ["raw_pdf"]
            assert keys == set(CHAIN)
    finally:
        conn.close()
    for folder in (home, worker_home):
        assert not list(folder.glob("**/*.db")), f"a SQLite database under {folder}"
    assert_searchable(lake, embedder)


def step_events(instance: DagsterInstance, run_id: str, kind: DagsterEventType) -> set[str]:
    """The steps of a run that have an event of `kind`."""
    records = instance.get_records_for_run(run_id=run_id, of_type=kind).records
    return {r.event_log_entry.step_key for r in records}


def test_on_dask_a_step_whose_upstream_failed_neither_runs_nor_records_a_materialization(
    one_doc_lake: Lake, tmp_path: Path, embedder, monkeypatch
) -> None:
    from dask.distributed import LocalCluster

    lake = one_doc_lake
    home = dagster_home(tmp_path / "dagster_home", "telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("TRECHO_LAKE", str(lake.root))
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
        job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
        assert job.execute_in_process(partition_key=KEY, instance=instance).success
        # the version's file replaced by a truncated one: its first steps fail, while the
        # Parquet of the good file is still there for the later steps to read
        pdf = lake.root / "raw" / "regulamento-ruido" / "v1.pdf"
        pdf.write_bytes(pdf.read_bytes()[:300])
        # two workers of one thread each, as docs/deploy.md tells a deployment to start them
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            done = subprocess.run(
                execute_cmd(KEY),
                env={
                    **os.environ,
                    "TRECHO_EXECUTOR": "dask",
                    "TRECHO_DASK_ADDRESS": cluster.scheduler_address,
                },
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=600,
            )
        assert done.returncode != 0, done.stdout[-3000:]
        run = instance.get_runs(limit=1)[0]
        assert run.status == DagsterRunStatus.FAILURE
        failed = step_events(instance, run.run_id, DagsterEventType.STEP_FAILURE)
        assert "raw_pdf" in failed
        later = set(CHAIN[CHAIN.index("structure_tree") :])
        started = step_events(instance, run.run_id, DagsterEventType.STEP_START)
        assert not started & later, f"ran after its upstream failed: {started & later}"
        assert step_events(instance, run.run_id, DagsterEventType.ASSET_MATERIALIZATION) == set()
        # the UI shows them skipped, as with any other executor
        assert later <= step_events(instance, run.run_id, DagsterEventType.STEP_SKIPPED)
    assert_searchable(lake, embedder)  # the index still answers from the good file


# -- a real Celery worker, on a real Redis broker -----------------------------------------


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A throwaway redis-server (Debian's) on a free loopback port, nothing saved."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail(
            "redis-server not found: install the Debian package `redis-server` "
            "(apt-get install -y --no-install-recommends redis-server)"
        )
    port = free_port()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"redis://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_index_job_runs_its_steps_in_a_celery_worker(
    redis_url: str, one_doc_lake: Lake, tmp_path: Path, embedder, monkeypatch
) -> None:
    lake = one_doc_lake
    home = dagster_home(tmp_path / "dagster_home", "telemetry:\n  enabled: false\n")
    bin_dir = str(Path(sys.executable).parent)
    for name, value in {
        "DAGSTER_HOME": str(home),
        "TRECHO_LAKE": str(lake.root),
        "TRECHO_EXECUTOR": "celery",
        "TRECHO_CELERY_BROKER": f"{redis_url}/0",
        "TRECHO_CELERY_BACKEND": f"{redis_url}/1",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
    }.items():
        monkeypatch.setenv(name, value)
    with DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
        # the worker as docs/deploy.md starts it, on the shipped run config's broker
        worker = subprocess.Popen(
            [
                str(Path(bin_dir) / "dagster-celery"),
                *("worker", "start", "-A", "dagster_celery.app"),
                *("-y", str(DEPLOY / "run_config" / "celery.yaml"), "--", "--pool=solo"),
            ],
            stdout=(tmp_path / "worker.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            done = subprocess.run(
                execute_cmd(KEY), cwd=REPO, capture_output=True, text=True, timeout=600
            )
            (run,) = instance.get_runs()
            starts = instance.get_records_for_run(
                run_id=run.run_id, of_type=DagsterEventType.STEP_START
            ).records
            pids = {r.event_log_entry.dagster_event.pid for r in starts}
            # every step ran in the Celery worker's process, a child of the worker command
            parents = {int(Path(f"/proc/{pid}/stat").read_text().split()[3]) for pid in pids}
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=60)
    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:] + log[-3000:]
    assert run.status == DagsterRunStatus.SUCCESS
    assert len(starts) == len(CHAIN) and parents == {worker.pid}, (pids, parents, worker.pid)
    assert_searchable(lake, embedder)
