"""The Dockerfile as BuildKit parses it (the `dockerfile` package), and the image's start
command run against the working tree with the image's environment: what tests/deploy's
tests of the image share."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import dockerfile
import httpx

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def instructions() -> list[dockerfile.Command]:
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def stages() -> list[list[dockerfile.Command]]:
    """The build stages, each from its FROM on."""
    found: list[list[dockerfile.Command]] = []
    for cmd in instructions():
        if cmd.cmd == "FROM":
            found.append([])
        if found:
            found[-1].append(cmd)
    return found


def final_stage() -> list[dockerfile.Command]:
    return stages()[-1]


def only(stage: list[dockerfile.Command], name: str) -> dockerfile.Command:
    found = [cmd for cmd in stage if cmd.cmd == name]
    assert len(found) == 1, (name, found)
    return found[0]


def image_env() -> dict[str, str]:
    """The final stage's ENV, in order (later wins)."""
    env: dict[str, str] = {}
    for cmd in final_stage():
        if cmd.cmd == "ENV":
            pairs = cmd.value
            env.update(zip(pairs[::2], pairs[1::2], strict=True))
    return env


def launcher() -> tuple[str, str, str]:
    """(path in the image, mode, script) of the heredoc COPY in the final stage."""
    for cmd in final_stage():
        if cmd.cmd == "COPY" and cmd.heredocs:
            (doc,) = cmd.heredocs
            mode = next(f.split("=", 1)[1] for f in cmd.flags if f.startswith("--chmod="))
            return cmd.value[-1], mode, doc.content
    raise AssertionError("no launcher script in the final stage")


@contextmanager
def image_command(
    tmp_path: Path, extra_env: dict[str, str]
) -> Iterator[tuple[subprocess.Popen, str]]:
    """The image's ENTRYPOINT + CMD with the image's ENV, mapped onto the working tree:
    /opt/venv -> .venv, /app -> the repository, WORKDIR (/data) -> tmp_path/data,
    /tmp -> tmp_path/tmp."""
    path, mode, script = launcher()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher_file = bin_dir / Path(path).name
    launcher_file.write_text(script)
    launcher_file.chmod(int(mode, 8))
    venv = Path(sys.executable).parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEN_", "WEB_", "UVICORN_"))}
    for key, value in image_env().items():
        # the image's /tmp first: the paths put in below may themselves lie under /tmp
        mapped = value.replace("/tmp", str(tmp_path / "tmp"))
        mapped = mapped.replace("/opt/venv", str(venv)).replace("/app", str(ROOT))
        env[key] = mapped.replace("$PATH", f"{bin_dir}:{os.environ['PATH']}")
    port = free_port()
    env.update(HOST="127.0.0.1", PORT=str(port))  # the image listens on 0.0.0.0; tests on loopback
    env.update(extra_env)
    workdir = tmp_path / "data"
    workdir.mkdir()
    entrypoint = list(only(final_stage(), "ENTRYPOINT").value)
    cmd = list(only(final_stage(), "CMD").value)
    tini = shutil.which("tini")
    argv = ([tini, *entrypoint[1:]] if tini else []) + cmd
    # the logs go to stdout (JSON), the launcher to stderr: both into a file, never a pipe
    # nobody drains while the server runs (a full pipe blocks the server's next log line, and
    # then its exit)
    log = (tmp_path / "server.log").open("w")
    # a session of its own, to stop whole (`_kill_session`)
    proc = subprocess.Popen(
        argv, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    log.close()
    proc.log_path = tmp_path / "server.log"  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, f"exited with {proc.returncode}: {output(proc)}"
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "no /health in 30 s"
            time.sleep(0.1)
        yield proc, base
    finally:
        _kill_session(proc.pid)
        proc.wait()


def _kill_session(session: int) -> None:
    """SIGKILL every process of the session: `tini` and the server, which `tini` runs in a
    process group of its own (a SIGKILL to `tini` alone left the server running, orphaned)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with suppress(OSError):  # gone meanwhile, or not ours to signal
                if os.getsid(int(entry.name)) == session:
                    os.kill(int(entry.name), signal.SIGKILL)


def exit_code(proc: subprocess.Popen, timeout: float) -> int:
    """The server's exit code once it has stopped; if it has not in `timeout` seconds, a
    failure that shows what it wrote last."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"still running {timeout} s on; it wrote:\n{output(proc)[-6000:]}"
        ) from None


def output(proc: subprocess.Popen) -> str:
    """Everything the server has written so far (stdout and stderr)."""
    return proc.log_path.read_text()  # type: ignore[attr-defined]
