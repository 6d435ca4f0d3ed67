"""Servers the scale-out and fault tests start and break themselves, on free loopback ports.

- `ServiceProcess`: one uvicorn process of the service (`run_server` wraps it); it can be
  stopped gracefully or SIGKILLed. It runs in a temporary directory of its own (removed when
  it stops), so the embedded default's `./ten-archive.sqlite3` never lands in the checkout.
- `RedisServer`: a private `redis-server` in a temporary directory (never the shared Redis
  on 6379) that can be shut down, SIGKILLed and started again on the same port and data.
- `RedisClusterNodes`: three such servers in cluster mode, their 16384 slots split in three.
- `PostgresServer`: a private PostgreSQL cluster (`initdb` in a temporary directory, never the
  shared server on 5432) that can be stopped (fast or immediate, a crash) and started again
  on the same port and data.

Every wait is bounded; a server that does not come up fails the test with its log.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(check: Callable[[], bool], timeout: float, what: str, step: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:g} s")
        time.sleep(step)


class ServiceProcess:
    """The service (`uvicorn service.app:app`) on a free loopback port, `TEN_*` from `env` only."""

    def __init__(
        self,
        env: dict[str, str] | None = None,
        workers: int = 1,
        port: int | None = None,
        *,
        log_level: str = "warning",
        stdout: Path | None = None,
        uvicorn_access_log: bool = False,
        cwd: Path | None = None,
        wait: bool = True,
    ) -> None:
        """`stdout`: a file for everything the process writes (else the test's own output);
        `uvicorn_access_log`: without uvicorn's `--no-access-log`; `cwd`: where the embedded
        default's SQLite file lands (default: a temporary directory of this process alone,
        removed by `stop`/`kill`; never the checkout); `wait=False`: return at once (then
        `wait_healthy`), so that several processes start, and migrate, concurrently."""
        self.own_dir = None if cwd is not None else Path(tempfile.mkdtemp(prefix="ten-service-"))
        self.cwd = cwd if cwd is not None else self.own_dir
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.stdout = stdout
        proc_env = {k: v for k, v in os.environ.items() if not k.startswith(("TEN_", "PROMETHEUS"))}
        # no quota of open tables unless `env` sets one (tests/integration/test_table_quota.py):
        # the suites' servers are shared, every test calls from 127.0.0.1, and on Redis the
        # open tables of earlier runs stay for TEN_IDLE_TTL (a week)
        proc_env["TEN_MAX_OPEN_TABLES"] = "0"
        # a served app with API keys or JWTs refuses to start without its own ledger key
        # (`service.bootstrap.refuse_privacy_without_key`)
        proc_env["TEN_PRIVACY_KEY"] = "a-privacy-key-for-the-tests"
        proc_env.update(env or {})
        cmd = [
            sys.executable, "-m", "uvicorn", "service.app:app",
            "--host", "127.0.0.1", "--port", str(self.port),
            "--workers", str(workers), "--log-level", log_level,
            *([] if uvicorn_access_log else ["--no-access-log"]),
        ]  # fmt: skip
        # its own process group: a kill reaches every worker, and nothing else (the child
        # keeps its own copy of the log file's descriptor)
        with stdout.open("wb") if stdout else contextlib.nullcontext() as out:
            self.proc = subprocess.Popen(
                cmd, cwd=self.cwd, env=proc_env, start_new_session=True,
                stdout=out, stderr=subprocess.STDOUT if out else None,
            )  # fmt: skip
        if wait:
            try:
                self.wait_healthy()
            except BaseException:
                self.kill()
                raise

    def log(self) -> str:
        """What the process wrote so far (with `stdout`)."""
        return self.stdout.read_text(errors="replace") if self.stdout else ""

    def wait_healthy(self, deadline: float | None = None) -> None:
        """Until GET /health answers 200; `deadline` a `time.monotonic()` instant."""
        if deadline is None:
            deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the service exited with {self.proc.returncode}: {self.log()[-2000:]}"
                )
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/health", timeout=1).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start in time: {self.log()[-2000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook, no in-flight request finished."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._remove_own_dir()

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.proc.wait()
        self._remove_own_dir()

    def _remove_own_dir(self) -> None:
        if self.own_dir is not None:
            shutil.rmtree(self.own_dir, ignore_errors=True)


@contextlib.contextmanager
def run_server(env: dict[str, str] | None = None, workers: int = 1) -> Iterator[str]:
    """A real service process (uvicorn) on a free loopback port; yields its base URL."""
    server = ServiceProcess(env, workers)
    try:
        yield server.base
    finally:
        server.stop()


class RedisServer:
    """A private redis-server on a free loopback port, its data in a temporary directory."""

    def __init__(self, *args: str, port: int | None = None) -> None:
        if shutil.which("redis-server") is None:
            raise RuntimeError("redis-server is not installed (scripts/services installs it)")
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix=f"ten-redis-{self.port}-"))
        self.args = args
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, **kwargs) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5, **kwargs)

    def start(self) -> None:
        """Start (again, on the same port and data directory) and wait until it serves."""
        cmd = [
            "redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
            "--dir", str(self.dir), "--logfile", "redis.log", "--daemonize", "no",
            "--save", "", "--appendonly", "no", *self.args,
        ]  # fmt: skip
        self.proc = subprocess.Popen(cmd, cwd=self.dir, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"redis-server exited with {self.proc.returncode}:\n{self.log()}"
                )
            try:
                with self.client(socket_connect_timeout=1) as client:
                    if client.ping():
                        return
            except redis.BusyLoadingError:
                pass  # still reading its AOF
            except redis.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"redis-server did not start in {START_TIMEOUT:g} s:\n{self.log()}"
                )
            time.sleep(0.05)

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "redis.log").read_text(errors="replace")[-3000:]
        return ""

    def shutdown(self) -> None:
        """A clean stop (SHUTDOWN: an AOF is flushed; no RDB unless save points are set)."""
        assert self.proc is not None
        with contextlib.suppress(redis.ConnectionError), self.client() as client:
            client.shutdown(nosave=True)
        self.proc.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL: whatever the server had not written is lost."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The server stopped (SIGSTOP) for the block: it accepts connections and answers
        nothing, as in a network partition; running again after it."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_connections(nodes: list[RedisServer]) -> tuple[int, int]:
    """The clients connected to `nodes` (the connection asking taken off) and, of them, the
    Pub/Sub ones."""
    total = pubsub = 0
    for node in nodes:
        with node.client() as client:
            total += int(client.info("clients")["connected_clients"]) - 1
            pubsub += len(client.execute_command("CLIENT LIST TYPE pubsub").splitlines())
    return total, pubsub


class RedisClusterNodes:
    """Three redis-server nodes in cluster mode on loopback, no replicas, slots split in three.

    Made with CLUSTER ADDSLOTSRANGE and CLUSTER MEET (what `redis-cli --cluster create`
    sends), then waited on until every node reports `cluster_state:ok`."""

    SIZE = 3

    def __init__(self) -> None:
        self.nodes: list[RedisServer] = []
        self.buses: list[int] = []
        try:
            for _ in range(self.SIZE):
                bus = free_port()  # the cluster bus: not port + 10000, which may be taken
                options = [
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-port", str(bus), "--cluster-node-timeout", "2000",
                ]  # fmt: skip
                self.nodes.append(RedisServer(*options))
                self.buses.append(bus)
            self._create()
        except BaseException:
            self.close()
            raise

    def _create(self) -> None:
        per = 16384 // self.SIZE
        clients = [node.client() for node in self.nodes]
        try:
            for i, client in enumerate(clients):
                last = 16383 if i == self.SIZE - 1 else (i + 1) * per - 1
                client.execute_command("CLUSTER ADDSLOTSRANGE", i * per, last)
            for node, bus in zip(self.nodes[1:], self.buses[1:], strict=True):
                clients[0].execute_command("CLUSTER MEET", "127.0.0.1", node.port, bus)

            def ok() -> bool:
                for client in clients:
                    info = client.cluster("info")
                    if info["cluster_state"] != "ok" or int(info["cluster_known_nodes"]) != 3:
                        return False
                return True

            wait_until(ok, START_TIMEOUT, "the cluster reaching cluster_state:ok", step=0.1)
        finally:
            for client in clients:
                client.close()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}"

    def client(self) -> redis.RedisCluster:
        return redis.RedisCluster(host="127.0.0.1", port=self.nodes[0].port, socket_timeout=5)

    def close(self) -> None:
        for node in self.nodes:
            node.close()


def postgres_program(name: str) -> str:
    """A PostgreSQL server program (`initdb`, `pg_ctl`): Debian keeps them out of PATH, in
    /usr/lib/postgresql/<major>/bin (the newest major wins)."""
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if found:
        return found[-1]
    on_path = shutil.which(name)
    if on_path is None:
        raise RuntimeError(f"{name} is not installed (Debian's postgresql package has it)")
    return on_path


class PostgresServer:
    """A private PostgreSQL cluster on a free loopback port, trust authentication, superuser
    `postgres`, its data and socket in a temporary directory. `initdb` refuses to run as
    root: as root, every server program runs as the `postgres` user (`runuser`)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix=f"ten-pg-{self.port}-"))
        self.data = self.dir / "data"
        self._as: list[str] = []
        try:
            if os.geteuid() == 0:
                try:
                    owner = pwd.getpwnam("postgres")
                except KeyError:
                    raise RuntimeError("as root, initdb needs a `postgres` user") from None
                os.chown(self.dir, owner.pw_uid, owner.pw_gid)
                self._as = ["runuser", "-u", "postgres", "--"]
            self._run(
                postgres_program("initdb"), "-D", str(self.data), "-A", "trust",
                "-U", "postgres", "-E", "UTF8", "--no-sync", "--no-instructions",
            )  # fmt: skip
            self.start()
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    @property
    def url(self) -> str:
        """The service's `TEN_DATABASE_URL`."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def dsn(self) -> str:
        """For asyncpg itself."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *cmd: str) -> None:
        done = subprocess.run(
            [*self._as, *cmd], check=False, capture_output=True, text=True,
            start_new_session=True, timeout=START_TIMEOUT + 10,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(
                f"{Path(cmd[0]).name} failed ({done.returncode}): {done.stdout}{done.stderr}\n"
                f"{self.log()}"
            )

    def start(self) -> None:
        """Start (again, on the same port and data) and wait until it accepts connections."""
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1"
        self._run(
            postgres_program("pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "server.log"),
            "-o", options, "-w", "-t", str(int(START_TIMEOUT)), "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """`fast`: sessions ended, a clean shutdown; `immediate`: every process killed at once
        (a crash: the next start recovers from the WAL)."""
        self._run(
            postgres_program("pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
            "-t", str(int(START_TIMEOUT)), "stop",
        )  # fmt: skip

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "server.log").read_text(errors="replace")[-3000:]
        return ""

    def close(self) -> None:
        if self.running():
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
