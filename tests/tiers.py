"""The suite's tiers and its grouping for pytest-xdist (docs/testing.md), applied by the hooks
in tests/conftest.py so that no test can be forgotten:

- markers by what a test needs: ``e2e`` (real processes: the stack, the ``quire`` command),
  ``browser`` (Chromium), ``postgres`` (the PostgreSQL server); ``slow`` stays hand-set;
- an ``xdist_group`` for every test that shares an expensive fixture (module-, package- or
  session-scoped, built by the suite) with others, so that it is built on one worker only;
- the scheduler that hands out the groups, the heaviest first.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId
from xdist.scheduler import LoadGroupScheduling
from xdist.workermanage import WorkerController

# Per-worker fixtures that are cheap, or meant to be built on every worker: they do not bind
# tests together.
UNGROUPED = frozenset(
    {
        "backend",  # a parameter, not a resource
        "module_database_url",  # a PostgreSQL database copied from the template (~50 ms)
        "pg_server",  # one per worker by design
        "sqlite_template",
        "stored_vectors",  # every test's, autouse
        "worker_id",
        "testrun_uid",
        "tmp_path_factory",
        "anyio_backend",
    }
)

E2E_DIRS = ("tests/e2e/", "tests/hardening/")
BROWSER_FIXTURES = frozenset({"chromium", "browser"})
#: Groups whose name starts with one of these go first: few tests, long ones (real processes).
HEAVY_PREFIXES = ("e2e", "browser", "postgres")


def _relpath(item: pytest.Item) -> str:
    return Path(item.path).resolve().relative_to(Path(item.config.rootpath).resolve()).as_posix()


def mark_tiers(items: Iterable[pytest.Item]) -> None:
    for item in items:
        path = _relpath(item)
        names = set(item.fixturenames)
        if path.startswith(E2E_DIRS):
            item.add_marker(pytest.mark.e2e)
        if path == "tests/e2e/test_browser.py" or names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("backend") == "postgresql"
        if on_postgres or "pg_server" in names:
            item.add_marker(pytest.mark.postgres)


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """Keys of the expensive fixture instances this test shares with others."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    callspec = getattr(item, "callspec", None)
    # A module's fixtures built on ``backend`` are built once per backend: the two halves of
    # a both_backends module can run on two workers.
    backend = callspec.params.get("backend", "") if callspec is not None else ""
    keys = []
    for name, defs in info.name2fixturedefs.items():
        if not defs or name in UNGROUPED:
            continue
        fixturedef = defs[-1]
        module = getattr(fixturedef.func, "__module__", "") or ""
        if fixturedef.scope == "function" or not module.startswith("tests"):
            continue
        if fixturedef.scope in ("module", "class"):
            # No "]" in a group name: xdist takes a "@" before the last "]" for a parameter.
            keys.append(f"{_relpath(item)}:{backend}" if backend else _relpath(item))
        else:  # package or session: one instance for every test that uses it
            keys.append(f"{fixturedef.baseid or 'tests'}::{name}")
    return keys


def group_for_xdist(items: list[pytest.Item], *, suffix_nodeids: bool) -> None:
    """Give tests that share an expensive fixture one ``xdist_group`` (a connected component:
    two modules sharing a session fixture end up in one group), named after its heaviest
    tier so that the scheduler can start the long groups first.

    ``suffix_nodeids`` (on an xdist worker under ``--dist loadgroup``): also append the group
    to the node id, which is how the worker tells the scheduler. pytest-xdist does that itself
    by writing ``item._nodeid``, which pytest 9.2's structured node ids no longer read
    (pytest-xdist issue 1386): its groups are silently ignored there."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    shared = {item.nodeid: _shared_fixtures(item) for item in items}
    for keys in shared.values():
        for key in keys:
            parent[find(key)] = find(keys[0])
    tiers: dict[str, int] = {}
    for item in items:
        if shared[item.nodeid]:
            root = find(shared[item.nodeid][0])
            tiers[root] = min(tiers.get(root, len(HEAVY_PREFIXES)), _tier(item))
    for item in items:
        if shared[item.nodeid]:
            root = find(shared[item.nodeid][0])
            tier = (*HEAVY_PREFIXES, "unit")[tiers[root]]
            group = f"{tier}:{root}"
            item.add_marker(pytest.mark.xdist_group(group))
            if suffix_nodeids and not item.nodeid.endswith(f"@{group}"):
                item._id = NodeId.parse(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]


def _tier(item: pytest.Item) -> int:
    """The rank of the heaviest of HEAVY_PREFIXES this test is marked with (last: none)."""
    for rank, name in enumerate(HEAVY_PREFIXES):
        if item.get_closest_marker(name) is not None:
            return rank
    return len(HEAVY_PREFIXES)


class HeaviestFirst(LoadGroupScheduling):
    """pytest-xdist's ``loadgroup``, with the work units handed out heaviest first: the groups
    of real processes (e2e, browser), then PostgreSQL's, then by their number of tests, so
    that a long group never starts last and leaves the other workers idle."""

    _sorted = False

    def _assign_work_unit(self, node: WorkerController) -> None:
        if not self._sorted:
            self._sorted = True
            units = sorted(self.workqueue.items(), key=self._weight)
            self.workqueue.clear()
            self.workqueue.update(units)
        super()._assign_work_unit(node)

    @staticmethod
    def _weight(unit: tuple[str, dict[str, bool]]) -> tuple[int, int]:
        scope, tests = unit
        tier = scope.split(":", 1)[0]
        rank = HEAVY_PREFIXES.index(tier) if tier in HEAVY_PREFIXES else len(HEAVY_PREFIXES)
        return rank, -len(tests)
