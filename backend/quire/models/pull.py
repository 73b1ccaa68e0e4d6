"""``quire models pull``: fetch a model from the Hugging Face Hub, make it int8 ONNX, check it,
install it in one rename.

    result = pull(model_spec("reranker", settings), report=print)
    result.manifest.source   # "int8" (taken as published), "quantised" or "exported"

What is fetched, by what the repo publishes (only the chosen files are downloaded):

    int8 ONNX for this CPU (onnx/model_quint8_avx2.onnx ...)  taken as is, with tokenizer.json
    fp32 ONNX (model.onnx, onnx/model.onnx)                   quantised: dynamic, per channel
    PyTorch / safetensors weights + config.json               exported by optimum, then quantised

Conversion happens here, at pull time, never when a search loads the model. huggingface_hub does
the HTTP: ``HF_ENDPOINT`` (a mirror), ``HF_HUB_OFFLINE`` (then only its cache is read, and no
request is made), ``HF_TOKEN``, ``HF_HOME`` and the usual ``HTTPS_PROXY``/``NO_PROXY`` apply.
Files land in its cache first (an interrupted download resumes from there), then everything is
built in a hidden folder beside the target, loaded and scored, and renamed into place: a pull
that fails or is killed never leaves a model that ``load_reranker`` would pick up.

    plan.py     what to download and how to convert it (pure: a repo's file list in)
    fetch.py    huggingface_hub: list, download into its cache, errors
    convert.py  quantise / export, then check (load and score a pair)
    errors.py   why a pull failed, each error saying what to do
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from quire import __version__
from quire.errors import Conflict
from quire.models.convert import build, check
from quire.models.errors import (
    ConverterMissing,
    DiskFull,
    HubUnreachable,
    NotAModel,
    PullInProgress,
    RepoNotFound,
)
from quire.models.fetch import Hub
from quire.models.hub import MANIFEST, Manifest, ModelSpec, inspect
from quire.models.plan import Listing, Plan, Report, Step, available_converters, choose, no_model

__all__ = [
    "ConverterMissing",
    "DiskFull",
    "HubUnreachable",
    "NotAModel",
    "PullInProgress",
    "PullResult",
    "RepoNotFound",
    "Report",
    "Step",
    "check",
    "choose",
    "pull",
]

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Slack on top of the estimated space a pull needs.
SPACE_MARGIN = 16_000_000


@dataclass
class PullResult:
    """What a pull did."""

    spec: ModelSpec
    manifest: Manifest
    up_to_date: bool = False  # nothing was changed: this commit is installed already
    notes: list[str] = field(default_factory=list)


def pull(
    spec: ModelSpec,
    *,
    force: bool = False,
    report: Report | None = None,
    endpoint: str | None = None,
    cache_dir: Path | None = None,
    offline: bool | None = None,
) -> PullResult:
    """Fetch, convert, check and install ``spec`` at ``spec.target``.

    ``endpoint``, ``cache_dir`` and ``offline`` default to huggingface_hub's own settings
    (``HF_ENDPOINT``, ``HF_HOME``/``HF_HUB_CACHE``, ``HF_HUB_OFFLINE``). ``force`` replaces an
    installed model even when it is the same commit or was put there by hand."""
    from huggingface_hub import constants

    hub = Hub(
        spec,
        # An empty HF_ENDPOINT (an unset build argument, say) means the default hub.
        endpoint=(endpoint or constants.ENDPOINT or DEFAULT_ENDPOINT).rstrip("/"),
        cache_dir=Path(cache_dir or constants.HF_HUB_CACHE),
        offline=constants.HF_HUB_OFFLINE if offline is None else offline,
        report=report or (lambda step: None),
    )
    target = spec.target
    with _disk_errors(target), _locked(target):
        _recover(target)
        notes: list[str] = []
        listing = hub.listing(notes)
        state = inspect(spec)
        current = state.manifest
        if target.is_dir() and not force:
            if current is None and any(target.iterdir()):
                raise Conflict(
                    f"{target} holds files Quire did not put there (a model installed by "
                    "hand?); `quire models pull --force` replaces the whole folder"
                )
            same = current is not None and (current.repo, current.commit) == (
                spec.repo,
                listing.commit,
            )
            if state.present and current is not None and same:
                return PullResult(spec, current, up_to_date=True, notes=notes)
        plan = choose(listing.files, converters=available_converters())
        if plan is None:
            raise no_model(spec, listing)
        _check_space(plan, listing, target, hub.cache_dir)
        started = time.perf_counter()
        snapshot = hub.download(plan, listing)
        downloaded = time.perf_counter()
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.pull-", dir=target.parent))
        try:
            model_file = build(plan, snapshot, staging, hub.report)
            converted = time.perf_counter()
            hub.report(Step("check: load and score a pair"))
            check(staging)
            hub.report(Step("check: load and score a pair", done=True))
            checked = time.perf_counter()
            manifest = Manifest(
                name=spec.name,
                repo=spec.repo,
                revision=spec.revision,
                commit=listing.commit,
                source=plan.source,
                model_file=model_file,
                files={
                    p.relative_to(staging).as_posix(): p.stat().st_size
                    for p in sorted(staging.rglob("*"))
                    if p.is_file()
                },
                pulled_at=datetime.now(UTC),
                seconds={
                    "download": round(downloaded - started, 2),
                    "convert": round(converted - downloaded, 2),
                    "check": round(checked - converted, 2),
                },
                quire_version=__version__,
            )
            (staging / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", "utf-8")
            _install(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        log.info("%s installed at %s from %s@%s", spec.name, target, spec.repo, listing.commit)
        return PullResult(spec, manifest, notes=notes)


def _install(staging: Path, target: Path) -> None:
    """Put ``staging`` at ``target`` by renames; an older model is moved aside, then removed."""
    old = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
        target.rename(old)
    staging.rename(target)
    if old is not None:
        if old.is_symlink():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)


def _recover(target: Path) -> None:
    """Tidy what a killed pull left: restore a model moved aside, drop unfinished folders."""
    olds = sorted(target.parent.glob(f".{target.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not target.exists():  # killed between the two renames of `_install`
        olds.pop().rename(target)
    for leftover in [*olds, *target.parent.glob(f".{target.name}.pull-*")]:
        shutil.rmtree(leftover, ignore_errors=True)


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            raise PullInProgress(f"another pull into {target} is running") from e
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def _disk_errors(target: Path) -> Iterator[None]:
    try:
        yield
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        raise DiskFull(
            f"the disk filled up while pulling into {target} ({e.filename or 'the cache'}); "
            "nothing was installed: free some space and pull again"
        ) from e


def _check_space(plan: Plan, listing: Listing, target: Path, cache: Path) -> None:
    """Fail before downloading when the target's or the cache's disk is clearly too small."""
    size = plan.size(listing)
    into_cache = 0 if listing.cached else size
    # int8 is about a quarter of fp32; an export writes the fp32 graph first.
    into_target = {"int8": size, "quantised": size // 3, "exported": size + size // 3}[plan.source]
    cache.mkdir(parents=True, exist_ok=True)
    needs: dict[Path, int] = {}
    for folder, n in ((target.parent, into_target), (cache, into_cache)):
        same = next((f for f in needs if f.stat().st_dev == folder.stat().st_dev), folder)
        needs[same] = needs.get(same, 0) + n
    for folder, n in needs.items():
        free = shutil.disk_usage(folder).free
        if n + SPACE_MARGIN > free:
            raise DiskFull(
                f"pulling {plan.model} needs about {_mb(n + SPACE_MARGIN)} in {folder}, "
                f"but {_mb(free)} are free"
            )


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"
