"""A queued file says where it stands: files ahead of it and, once the library has finished
some, an estimate of when it will be done (GET /api/jobs/{id})."""

from __future__ import annotations

import io

from fastapi.testclient import TestClient

from quire.config import Settings
from quire.storage import jobs
from quire.storage.db import Database
from tests.conftest import DOCS
from tests.runtime import drain


def _upload(client: TestClient, name: str, content: bytes) -> int:
    r = client.post("/api/documents", files=[("files", (name, io.BytesIO(content)))])
    assert r.status_code == 202, r.text
    [item] = r.json()["files"]
    return int(item["job_id"])


def test_a_queued_file_says_how_many_are_ahead_and_when_it_will_be_done(
    client: TestClient, settings: Settings, db: Database
) -> None:
    pdfs = [
        (DOCS / "pdf" / n).read_bytes() for n in ("dmca-summary.pdf", "riscv-abi-spec-v1.0.pdf")
    ]
    first = [
        _upload(client, f"notes-{i}.md", f"# Note {i}\n\nTide {i}.".encode()) for i in range(2)
    ]
    first.append(_upload(client, "dmca.pdf", pdfs[0]))
    job = client.get(f"/api/jobs/{first[2]}").json()
    assert (job["status"], job["ahead"], job["running"]) == ("queued", 2, 0)
    assert job["eta_s"] is None  # nothing finished yet: no honest estimate
    assert drain(settings) == 3
    done = client.get(f"/api/jobs/{first[0]}").json()
    assert done["status"] == "done" and done["ahead"] is None and done["eta_s"] is None

    # Now the library knows how long its files take: a bigger file ahead is a longer wait.
    small = _upload(client, "notes-9.md", b"# Note 9\n\nTide nine.")
    big = _upload(client, "riscv.pdf", pdfs[1])
    after = _upload(client, "notes-10.md", b"# Note 10\n\nTide ten.")
    places = {j: client.get(f"/api/jobs/{j}").json() for j in (small, big, after)}
    assert [places[j]["ahead"] for j in (small, big, after)] == [0, 1, 2]
    etas = [places[j]["eta_s"] for j in (small, big, after)]
    assert all(isinstance(e, float) and e >= 0 for e in etas), etas
    assert etas[0] <= etas[1] <= etas[2]
    with db.read() as conn:
        pace = jobs.pace(conn)  # the line the estimates come from
    assert pace is not None and pace.per_mb > 0
    assert pace.seconds(len(pdfs[1])) > 2 * pace.seconds(20)  # the PDF is most of the wait
