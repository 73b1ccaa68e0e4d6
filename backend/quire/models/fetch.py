"""The Hugging Face Hub through huggingface_hub: list a revision's files, download some into
its cache, and turn its errors (and the network's) into Quire's.

Everything network-related is huggingface_hub's own: ``HF_ENDPOINT``, ``HF_HUB_OFFLINE``,
``HF_TOKEN``, ``HF_HOME``/``HF_HUB_CACHE``, and requests' ``HTTPS_PROXY``/``NO_PROXY``.

    hub = Hub(spec, endpoint=..., cache_dir=..., offline=False, report=print)
    listing = hub.listing(notes)          # commit + files with sizes (offline: from the cache)
    snapshot = hub.download(plan, listing)  # the cache's snapshot folder holding them
"""

from __future__ import annotations

import contextlib
import errno
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from quire import __version__
from quire.models.errors import HubUnreachable, RepoNotFound
from quire.models.hub import ModelSpec
from quire.models.plan import Listing, Plan, Report, Step

#: Bytes huggingface_hub writes at a time: the progress of a download is read from the file's
#: size, and its own 10 MB would move the bar of the 23 MB default model three times.
WRITE_CHUNK = 1 << 20


class Hub:
    """huggingface_hub calls for one model, with its errors turned into Quire's."""

    def __init__(
        self, spec: ModelSpec, *, endpoint: str, cache_dir: Path, offline: bool, report: Report
    ) -> None:
        self.spec = spec
        self.endpoint = endpoint
        self.cache_dir = cache_dir
        self.offline = offline
        self.report = report

    def listing(self, notes: list[str]) -> Listing:
        """The files of the configured revision: from the hub, or (offline) from the cache."""
        if self.offline:
            cached = self._cached()
            if cached is None:
                raise HubUnreachable(
                    f"HF_HUB_OFFLINE is set and {self._name()} is not in the Hugging Face cache "
                    f"({self.cache_dir}): pull once with the network, or unset HF_HUB_OFFLINE"
                )
            notes.append(f"offline: using the cached copy of {self._name()}")
            return cached
        from huggingface_hub import HfApi

        api = HfApi(endpoint=self.endpoint, library_name="quire", library_version=__version__)
        try:
            with self._errors("list the files of"):
                info = api.model_info(
                    self.spec.repo, revision=self.spec.revision, files_metadata=True
                )
        except HubUnreachable as e:  # down, or answering 5xx: the cache will do, as for hf
            cached = self._cached()
            if cached is None:
                raise
            notes.append(f"{e.message}; using the cached copy of {self._name()}")
            return cached
        if info.sha is None:
            raise HubUnreachable(f"{self.endpoint} sent no commit for {self._name()}")
        files = {s.rfilename: s.size for s in info.siblings or []}
        return Listing(info.sha, files, cached=False)

    def download(self, plan: Plan, listing: Listing) -> Path:
        """Fetch the plan's files into the cache; returns the snapshot folder holding them."""
        from huggingface_hub import constants, hf_hub_download
        from huggingface_hub.utils.tqdm import (
            are_progress_bars_disabled,
            disable_progress_bars,
            enable_progress_bars,
        )

        quiet = are_progress_bars_disabled()
        disable_progress_bars()  # the caller draws its own bars from `report`
        chunk = constants.DOWNLOAD_CHUNK_SIZE
        constants.DOWNLOAD_CHUNK_SIZE = min(chunk, WRITE_CHUNK)
        try:
            path = ""
            for name in plan.files:
                label = f"download {name}"
                size = listing.files.get(name)
                self.report(Step(label, 0, size))
                with self._errors(f"download {name} of"), self._watch(label, size):
                    path = hf_hub_download(
                        self.spec.repo,
                        name,
                        revision=listing.commit,
                        cache_dir=self.cache_dir,
                        endpoint=self.endpoint,
                        local_files_only=self.offline or listing.cached,
                        library_name="quire",
                        library_version=__version__,
                    )
                done = Path(path).stat().st_size
                self.report(Step(label, done, size or done, done=True))
        finally:
            constants.DOWNLOAD_CHUNK_SIZE = chunk
            if not quiet:
                enable_progress_bars()
        if not listing.cached and self.spec.revision != listing.commit:
            # Files are fetched by commit; record the branch's commit as huggingface_hub does,
            # so an offline pull finds this revision in the cache later.
            ref = self._storage() / "refs" / self.spec.revision
            ref.parent.mkdir(parents=True, exist_ok=True)
            ref.write_text(listing.commit, encoding="utf-8")
        return self._storage() / "snapshots" / listing.commit

    def _cached(self) -> Listing | None:
        """The revision's files already in the cache (no request is made), or None."""
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            folder = Path(
                snapshot_download(
                    self.spec.repo,
                    revision=self.spec.revision,
                    cache_dir=self.cache_dir,
                    local_files_only=True,
                )
            )
        except (LocalEntryNotFoundError, OSError):
            return None
        files: dict[str, int | None] = {
            p.relative_to(folder).as_posix(): p.stat().st_size
            for p in folder.rglob("*")
            if p.is_file()
        }
        return Listing(folder.name, files, cached=True) if files else None

    def _storage(self) -> Path:
        from huggingface_hub.file_download import repo_folder_name

        return self.cache_dir / repo_folder_name(repo_id=self.spec.repo, repo_type="model")

    def _name(self) -> str:
        return f"{self.spec.repo}@{self.spec.revision}"

    @contextlib.contextmanager
    def _watch(self, label: str, total: int | None) -> Iterator[None]:
        """Report a download's bytes while huggingface_hub writes its ``.incomplete`` blob."""
        blobs = self._storage() / "blobs"
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(0.1):
                with contextlib.suppress(OSError, ValueError):
                    partial = max(blobs.glob("*.incomplete"), key=lambda p: p.stat().st_mtime)
                    self.report(Step(label, partial.stat().st_size, total))

        watcher = threading.Thread(target=poll, name="pull-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """huggingface_hub's and the network's errors, as Quire's (with what was being done)."""
        from huggingface_hub.errors import (
            EntryNotFoundError,
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        name, at = self._name(), self.endpoint
        try:
            yield
        except (LocalEntryNotFoundError, OfflineModeIsEnabled) as e:
            raise HubUnreachable(
                f"cannot {what} {name}: offline and not in the cache ({self.cache_dir})"
            ) from e
        except GatedRepoError as e:
            raise RepoNotFound(
                f"{self.spec.repo} at {at} is gated: accept its terms and set HF_TOKEN"
            ) from e
        except RepositoryNotFoundError as e:
            raise RepoNotFound(
                f"no model repository {self.spec.repo} at {at} "
                "(check QUIRE_RERANK_REPO; a private repo needs HF_TOKEN)"
            ) from e
        except RevisionNotFoundError as e:
            raise RepoNotFound(
                f"{self.spec.repo} at {at} has no revision {self.spec.revision!r} "
                "(check QUIRE_RERANK_REVISION)"
            ) from e
        except EntryNotFoundError as e:
            raise HubUnreachable(
                f"cannot {what} {name}: {at} lists the file but does not serve it"
            ) from e
        except HfHubHTTPError as e:
            status = e.response.status_code if e.response is not None else "an error"
            raise HubUnreachable(f"cannot {what} {name}: {at} answered HTTP {status}") from e
        except OSError as e:
            if e.errno == errno.ENOSPC:
                raise
            # requests' errors are OSErrors: refused, DNS, proxy, TLS, a connection cut mid-file.
            again = " Run the command again to resume." if what.startswith("download") else ""
            raise HubUnreachable(
                f"cannot {what} {name} from {at} ({_reason(e)}); check the network, "
                f"HTTPS_PROXY, or HF_ENDPOINT for a mirror.{again}"
            ) from e


def _reason(e: BaseException) -> str:
    """The cause of a network error in a few words (requests nests it deep in its message)."""
    text = str(e)
    for pattern, short in (
        (r"\[Errno -?\d+\] ([^'\"()\]]+)", None),
        (r"Read timed out", "timed out"),
        (r"IncompleteRead\((\d+ bytes read, \d+ more expected)\)", None),
        (r"ProxyError|Unable to connect to proxy", "the proxy refused"),
        (r"SSLError|CERTIFICATE_VERIFY_FAILED", "TLS failed"),
    ):
        if m := re.search(pattern, text):
            return short or f"{type(e).__name__}: {m.group(1).strip()}"
    lines = text.strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:160]}" if lines else type(e).__name__
