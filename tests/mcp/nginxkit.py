"""nginx (Debian's package) as a load balancer in front of dsh_nb replicas.

The test writes its own ``nginx.conf`` in a temporary folder (loopback
ports, its own pid file, logs and temp folders) and runs nginx in the
foreground as a child process, so nothing of the machine's nginx set-up is
read or touched. Without an ``nginx`` binary the tests skip locally and
fail under CI, whose ``.ci/run`` installs it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

CONF = """\
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream dsh_nb {{
{servers}
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://dsh_nb;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            # Streamable HTTP answers with SSE: pass each event on at once.
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"""


def nginx_binary() -> str:
    """The nginx program, or skip (fail under CI)."""
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is not installed: .ci/run installs Debian's nginx")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", port), timeout=0.5),
        ):
            return
        time.sleep(0.05)


@contextlib.contextmanager
def nginx(upstreams: Sequence[int], folder: Path) -> Iterator[str]:
    """Run nginx balancing ``upstreams`` (ports); yield its ``/mcp`` URL."""
    binary = nginx_binary()
    prefix = folder / "nginx"
    prefix.mkdir(parents=True, exist_ok=True)
    port = free_port()
    # As root, nginx's workers would switch to "nobody"; stay who we are.
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in upstreams)
    conf = prefix / "nginx.conf"
    conf.write_text(CONF.format(prefix=prefix, port=port, servers=servers, user=user))
    proc = subprocess.Popen(
        [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, proc, 20)
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"nginx did not start: {err}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()  # SIGTERM: nginx's fast shutdown
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
