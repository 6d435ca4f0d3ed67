"""A replicated Redis watched by Redis Sentinel, on free loopback ports, for the failover
tests: a primary, one replica, three sentinels (Debian's `redis-server --sentinel`), each
a private process in a temporary directory (never the shared Redis on 6379).

The sentinels judge the primary down after `DOWN_AFTER_MS` without an answer; two of the
three must agree (the quorum), then one of them promotes the replica. Every wait is bounded;
a group that does not come up fails the test with its logs."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import redis

from tests.servers import START_TIMEOUT, RedisServer, free_port, wait_until

MASTER = "ten"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT = 30.0  # seconds from the primary's death to a promoted replica
REJOIN_TIMEOUT = 90.0  # seconds from the old primary's restart to its following the new one
# A sentinel "fixes" a replica whose primary's address is not the one it monitors once the
# failover-timeout has passed (+fix-slave-config): ours reaches its primary through the
# `ReplicationLink`, so with a short timeout the replica was moved off the link 5 s after
# the sentinels started, the cut stopped nothing and no loss could be counted (the flaky
# failover test). With one replica, promotion does not wait for this timeout.
SENTINEL_FAILOVER_TIMEOUT_MS = 600_000


class Sentinel:
    """One `redis-server --sentinel` process on its own config file (it rewrites it)."""

    def __init__(self, primary_port: int) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix=f"ten-sentinel-{self.port}-"))
        config = self.dir / "sentinel.conf"
        config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile sentinel.log\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {primary_port} 2\n"
            f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {MASTER} {SENTINEL_FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {MASTER} 1\n"
        )
        self.proc = subprocess.Popen(
            ["redis-server", str(config), "--sentinel"], cwd=self.dir, start_new_session=True
        )

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=2, decode_responses=True
        )

    def master(self) -> dict:
        """What this sentinel knows of the primary (SENTINEL MASTER), {} if it cannot say."""
        with contextlib.suppress(redis.RedisError), self.client() as client:
            return client.sentinel_master(MASTER)
        return {}

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "sentinel.log").read_text(errors="replace")[-2000:]
        return ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


class ReplicationLink:
    """A TCP relay the replica reaches its primary through, which can drop what the primary
    sends (`cut`: a partition of that direction; the replica's acknowledgements still go
    through). Threads, one pair per connection."""

    def __init__(self, primary_port: int) -> None:
        self.primary_port = primary_port
        self.cut = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                replica, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.sockets.append(replica)
            try:
                primary = socket.create_connection(("127.0.0.1", self.primary_port), timeout=2)
            except OSError:  # the primary is dead: so is the link
                replica.close()
                continue
            primary.settimeout(None)
            self.sockets.append(primary)
            for source, sink, downstream in ((primary, replica, True), (replica, primary, False)):
                threading.Thread(
                    target=self._pump, args=(source, sink, downstream), daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket, downstream: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if not (downstream and self.cut.is_set()):
                    sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()


class SentinelGroup:
    """Primary + replica (through a `ReplicationLink`) + three sentinels, ready once every
    sentinel sees the replica and the two other sentinels."""

    def __init__(self) -> None:
        self.primary = RedisServer()
        self.link = ReplicationLink(self.primary.port)
        self.replica: RedisServer | None = None
        self.sentinels: list[Sentinel] = []
        try:
            self.replica = RedisServer("--replicaof", "127.0.0.1", str(self.link.port))
            wait_until(self._replica_synced, START_TIMEOUT, "the replica's first sync")
            self.sentinels = [Sentinel(self.primary.port) for _ in range(3)]
            wait_until(self._watching, START_TIMEOUT, "three sentinels watching both servers")
        except BaseException as exc:
            seen = self.views()
            self.close()
            raise RuntimeError(f"sentinel group did not start: {exc}\n{seen}") from exc

    @property
    def addresses(self) -> str:
        """TEN_REDIS_SENTINELS."""
        return ",".join(f"127.0.0.1:{sentinel.port}" for sentinel in self.sentinels)

    def _replica_synced(self) -> bool:
        assert self.replica is not None
        with self.replica.client() as client:
            return client.info("replication").get("master_link_status") == "up"

    def _watching(self) -> bool:
        for sentinel in self.sentinels:
            known = sentinel.master()
            if not known or int(known["num-slaves"]) < 1 or int(known["num-other-sentinels"]) < 2:
                return False
        return True

    def replica_through_link(self) -> bool:
        """The replica still follows its primary through the link (what `cut` needs)."""
        assert self.replica is not None
        with self.replica.client() as client:
            return int(client.info("replication")["master_port"]) == self.link.port

    def kill_primary(self) -> float:
        """SIGKILL the primary; returns when (time.monotonic)."""
        self.primary.kill()
        return time.monotonic()

    def wait_for_failover(self) -> float:
        """Until every sentinel names the replica as the primary and it takes writes;
        returns when (time.monotonic)."""
        assert self.replica is not None
        replica = ("127.0.0.1", self.replica.port)

        def promoted() -> bool:
            for sentinel in self.sentinels:
                with contextlib.suppress(redis.RedisError), sentinel.client() as client:
                    host, port = client.sentinel_get_master_addr_by_name(MASTER) or ("", 0)
                    if (host, int(port)) != replica:
                        return False
                    continue
                return False
            with self.replica.client() as client:
                return client.info("replication")["role"] == "master"

        wait_until(promoted, FAILOVER_TIMEOUT, "the sentinels promoting the replica", step=0.1)
        return time.monotonic()

    def rejoin_old_primary(self) -> None:
        """Start the killed primary again; the sentinels make it a replica of the new one."""
        self.primary.start()

        def following() -> bool:
            with self.primary.client() as client:
                info = client.info("replication")
            return info["role"] == "slave" and info.get("master_link_status") == "up"

        # a setup wait, not a measured one: Sentinel converts a returning old primary only
        # once it has reported its role for 4 publish periods and answered INFO again, then
        # it resyncs; on a loaded 2-core machine that once took more than 30 s (a full run)
        try:
            wait_until(following, REJOIN_TIMEOUT, "the old primary following the new one", step=0.1)
        except AssertionError as exc:  # what each side saw: why it did not happen
            raise AssertionError(f"{exc}\n{self.views()}") from None

    def views(self) -> str:
        """The (first) primary's replication, each sentinel's view of the primary and its
        replicas, and its log's tail (a failed wait names what was missing)."""
        parts = []
        with contextlib.suppress(redis.RedisError), self.primary.client() as client:
            parts.append(f"first primary: {client.info('replication')}")
        for sentinel in self.sentinels:
            with contextlib.suppress(redis.RedisError), sentinel.client() as client:
                known = client.sentinel_master(MASTER)
                replicas = client.sentinel_slaves(MASTER)
                parts.append(f"sentinel {sentinel.port}: primary {known}, replicas {replicas}")
            parts.append(f"sentinel {sentinel.port} log:\n{sentinel.log()}")
        return "\n".join(parts)

    def close(self) -> None:
        for sentinel in self.sentinels:
            sentinel.close()
        for server in (self.replica, self.primary):
            if server is not None:
                server.close()
        self.link.close()
