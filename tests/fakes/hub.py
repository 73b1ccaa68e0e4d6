"""A fake Hugging Face Hub over HTTP: the endpoints huggingface_hub 0.36's ``model_info``,
``hf_hub_download`` and ``snapshot_download`` call, answered as huggingface.co answers them,
for repos held in memory. Point huggingface_hub at it with ``HF_ENDPOINT=hub.url``.

    hub = FakeHub().start()
    hub.add_repo("org/model", {"tokenizer.json": b"...", "onnx/model.onnx": b"..."})
    hub.break_file("org/model", "onnx/model.onnx", at=4096)  # the connection drops there
    hub.heal()                                              # ... until healed
    hub.pace_s = 0.05       # LFS files sent in 16 parts, this long apart: a progress bar moves
    hub.requests                                            # ("HEAD", "/org/model/resolve/...")
    hub.stop()

    GET  /api/models/{repo}[/revision/{rev}]   sha, siblings; ?blobs=true adds size, blobId, lfs
    HEAD /{repo}/resolve/{rev}/{path}          small files: 200, ETag (git blob sha1),
                                               Content-Length, X-Repo-Commit. LFS files
                                               (.onnx, .safetensors, .bin): 302 to /lfs/{sha256}
                                               with X-Linked-Etag and X-Linked-Size, as the hub
                                               hands a download to its CDN
    GET  /{repo}/resolve/{rev}/{path}          the same, with the bytes (or the redirect)
    GET  /lfs/{sha256}                         the bytes; Range gives 206 + Content-Range
    errors                                     401 X-Error-Code: RepoNotFound (as for a private
                                               repo), 404 RevisionNotFound / EntryNotFound

Plain ``http.server`` rather than the ASGI fakes' uvicorn: cutting a response off mid-body,
as a failing network does, needs the socket itself.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

#: The parts a paced LFS body is sent in.
PARTS = 16
LFS_SUFFIXES = (".onnx", ".onnx_data", ".safetensors", ".bin", ".msgpack", ".h5")


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str
    branches: set[str] = field(default_factory=lambda: {"main"})

    def sha256(self, path: str) -> str:
        return hashlib.sha256(self.files[path]).hexdigest()


def git_blob_id(data: bytes) -> str:
    """The git object id of a file, which the hub sends as a small file's ETag."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


class FakeHub:
    """The fake hub server; ``url`` is its HF_ENDPOINT once started."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self._breaks: dict[tuple[str, str], int] = {}
        #: Seconds between the PARTS parts of an LFS file's body (0: all at once).
        self.pace_s = 0.0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake hub is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add_repo(self, repo_id: str, files: dict[str, bytes]) -> Repo:
        """Publish ``files`` as one commit of ``repo_id`` on branch ``main``."""
        digest = hashlib.sha1(repo_id.encode())
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name])
        repo = Repo(dict(files), digest.hexdigest())
        self.repos[repo_id] = repo
        return repo

    def break_file(self, repo_id: str, path: str, *, at: int) -> None:
        """Serve ``path``'s bytes only up to offset ``at``, then drop the connection."""
        self._breaks[(repo_id, path)] = at

    def heal(self) -> None:
        self._breaks.clear()

    def start(self) -> FakeHub:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the endpoints ------------------------------------------------------------------------

    def record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    def model_info(
        self, repo_id: str, revision: str, blobs: bool
    ) -> tuple[int, dict[str, str], Any]:
        repo, error = self._resolve(repo_id, revision)
        if repo is None:
            return error
        siblings = []
        for name, data in sorted(repo.files.items()):
            sib: dict[str, Any] = {"rfilename": name}
            if blobs:
                sib["size"] = len(data)
                sib["blobId"] = git_blob_id(data)
                if is_lfs(name):
                    sib["lfs"] = {
                        "sha256": repo.sha256(name),
                        "size": len(data),
                        "pointerSize": 134,
                    }
            siblings.append(sib)
        body = {
            "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24],
            "id": repo_id,
            "modelId": repo_id,
            "author": repo_id.split("/")[0],
            "sha": repo.commit,
            "lastModified": "2024-01-01T00:00:00.000Z",
            "private": False,
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": ["onnx", "text-classification"],
            "pipeline_tag": "text-classification",
            "library_name": "sentence-transformers",
            "createdAt": "2024-01-01T00:00:00.000Z",
            "siblings": siblings,
        }
        return 200, {"Content-Type": "application/json"}, body

    def _resolve(
        self, repo_id: str, revision: str
    ) -> tuple[Repo | None, tuple[int, dict[str, str], Any]]:
        repo = self.repos.get(repo_id)
        if repo is None:
            # The hub answers 401 for a missing repo too (it might be private).
            return None, (
                401,
                {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
                {"error": "Repository not found"},
            )
        if revision not in repo.branches and revision != repo.commit:
            return None, (
                404,
                {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id"},
                {"error": f"Invalid rev id: {revision}"},
            )
        return repo, (200, {}, None)


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    resolve = re.compile(r"^/(?P<repo>[^/]+(?:/[^/]+)?)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
    info = re.compile(r"^/api/models/(?P<repo>[^/]+(?:/[^/]+)??)(?:/revision/(?P<rev>[^/]+))?$")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as huggingface_hub's session expects

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._route(head=True)

        def do_GET(self) -> None:
            self._route(head=False)

        def _route(self, *, head: bool) -> None:
            url = urlsplit(self.path)
            path = unquote(url.path)
            hub.record(self.command, self.path)
            if m := info.match(path):
                blobs = parse_qs(url.query).get("blobs", ["false"])[0].lower() == "true"
                status, headers, body = hub.model_info(m["repo"], m["rev"] or "main", blobs)
                self._json(status, headers, body, head=head)
            elif m := resolve.match(path):
                self._resolve(m["repo"], m["rev"], m["path"], head=head)
            elif path.startswith("/lfs/"):
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                self._lfs(path.removeprefix("/lfs/"), query, head=head)
            else:
                self._json(404, {}, {"error": "Not found"}, head=head)

        def _resolve(self, repo_id: str, rev: str, path: str, *, head: bool) -> None:
            repo, error = hub._resolve(repo_id, rev)
            if repo is None:
                self._json(*error, head=head)
                return
            commit = {"X-Repo-Commit": repo.commit}
            if path not in repo.files:
                headers = commit | {"X-Error-Code": "EntryNotFound"}
                self._json(404, headers, {"error": "Entry not found"}, head=head)
                return
            data = repo.files[path]
            if is_lfs(path):
                sha = repo.sha256(path)
                # Like a CDN's signed URL, the query says which file it is.
                where = urlencode({"repo": repo_id, "file": path})
                self._send(
                    302,
                    commit
                    | {
                        "Location": f"{hub.url}/lfs/{sha}?{where}",
                        "X-Linked-Etag": f'"{sha}"',
                        "X-Linked-Size": str(len(data)),
                        "ETag": f'"{git_blob_id(data)}"',
                        "Content-Length": "0",
                    },
                    b"",
                    head=head,
                )
                return
            headers = commit | {"ETag": f'"{git_blob_id(data)}"'}
            self._bytes(repo_id, path, data, headers, head=head)

        def _lfs(self, sha: str, query: dict[str, str], *, head: bool) -> None:
            repo_id, path = query.get("repo", ""), query.get("file", "")
            repo = hub.repos.get(repo_id)
            if repo is None or path not in repo.files or repo.sha256(path) != sha:
                self._json(404, {}, {"error": "Not found"}, head=head)
                return
            self._bytes(
                repo_id, path, repo.files[path], {"ETag": f'"{sha}"'}, head=head, paced=True
            )

        def _bytes(
            self,
            repo_id: str,
            path: str,
            data: bytes,
            headers: dict[str, str],
            *,
            head: bool,
            paced: bool = False,
        ) -> None:
            start, status = 0, 200
            if (ranged := re.match(r"bytes=(\d+)-$", self.headers.get("Range", ""))) is not None:
                start = int(ranged[1])
                if start >= len(data):
                    self._send(416, {"Content-Range": f"bytes */{len(data)}"}, b"", head=head)
                    return
                status = 206
                headers = headers | {"Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}
            body = data[start:]
            headers = headers | {
                "Content-Type": "application/octet-stream",
                "Content-Length": str(len(body)),
                "Accept-Ranges": "bytes",
            }
            cut = hub._breaks.get((repo_id, path))
            if paced and hub.pace_s and not head and cut is None:
                self._send(status, headers, b"", head=False)
                part = -(-len(body) // PARTS)
                for start in range(0, len(body), part):
                    time.sleep(hub.pace_s)
                    self.wfile.write(body[start : start + part])
                    self.wfile.flush()
                return
            if head or cut is None:
                self._send(status, headers, body, head=head)
                return
            # Headers promise the whole body; the bytes stop at `cut`, then the socket closes.
            self._send(status, headers, body[: max(0, cut - start)], head=False, flush=True)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        def _json(self, status: int, headers: dict[str, str], body: Any, *, head: bool) -> None:
            data = json.dumps(body).encode()
            headers = headers | {
                "Content-Type": "application/json",
                "Content-Length": str(len(data)),
            }
            self._send(status, headers, data, head=head)

        def _send(
            self,
            status: int,
            headers: dict[str, str],
            body: bytes,
            *,
            head: bool,
            flush: bool = False,
        ) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head and body:
                self.wfile.write(body)
            if flush:
                self.wfile.flush()

    return Handler
