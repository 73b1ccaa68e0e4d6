"""A model in two clicks (issue 36, item 2), in Chromium against nginx + API + worker, with the
fake Ollama over HTTP as the model server: before any model, an answer says once, in one line,
that it is quoted and links to Settings, with no server error in it or in its Markdown export;
Settings finds the server, lists its chat models and a recommendation, pulls one with a
progress bar that moves, and "Use this model" makes the next answer the pulled model's, on a
phone and on a desktop screen. A pull of an unknown model and a server gone mid-pull are said
plainly. The reranker is downloaded in the same place, from the fake Hugging Face Hub, with a
bar that moves, and the next search reranks with it (no restart)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.browser_helpers import ARTIFACTS, built_spa, phone_page
from tests.e2e.helpers import wait_until
from tests.e2e.stack import Stack, run_stack
from tests.fakes.hub import FakeHub
from tests.fakes.ollama import FakeOllama
from tests.fakes.rag_model import RagModel
from tests.models.conftest import built, hub  # noqa: F401 - fixtures: the tiny cross-encoder

pytestmark = pytest.mark.slow

NOTE = "# Harbor notes\n\nThe Marigold anchored near the reef at dawn, her sails furled.\n"
QUESTION = "Where did the Marigold anchor at dawn?"
#: Raw server words that must never reach an answer or its export.
#: The reranker's bar, its words, and whether the pull ended, read at one moment.
# One look at a pull's bar, its words and whether it ended (``prefix`` "" for a chat model's
# pull, "reranker-" for the reranker's): the bar goes away the moment the pull ends, so it is
# never counted and then read in two steps.
SNAPSHOT = """(prefix) => {
  const one = (id) => document.querySelector(`[data-testid="${prefix}${id}"]`)
  const bar = one(prefix ? "progress" : "pull-progress")
  return {
    value: bar && bar.position >= 0 ? bar.value : null,
    text: one("pull-status")?.innerText ?? null,
    ended: !!(one("pull-done") || one("pull-error")),
  }
}"""
RAW = ("127.0.0.1", "http://", "does not have the model", "unreachable", "llm_model_not_pulled")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["nomic-embed-text:latest"]) as server:
        yield server


def signed(rag: RagModel) -> Any:
    """The fake's responder: Quire's prompts answered sensibly, each answer signed with the
    name of the model that wrote it."""

    def reply(messages: list[dict[str, Any]], body: dict[str, Any]) -> Any:
        text = rag(messages, body)
        return f"{body['model']} writes: {text}" if rag.seen[-1] == "answer" else text

    return reply


@pytest.fixture
def server(fake: FakeOllama) -> Iterator[FakeOllama]:
    fake.pull_step_s = 0.25  # 8 steps: two seconds in which the bar is seen moving
    fake.responder = signed(RagModel())
    yield fake
    fake.registry = None
    fake.pull_cut_after = None


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory,
    fake: FakeOllama,
    hub: FakeHub,  # noqa: F811 - the fixture imported above
) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("browser-models")
    env = {
        "QUIRE_LLM_BACKENDS": "ollama",
        "QUIRE_OLLAMA_URL": fake.url,
        "QUIRE_LLM_RETRIES": "0",
        # The reranker comes from the fake hub, into a cache of the stack's own.
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(tmp / "hf"),
        "HF_HUB_OFFLINE": "0",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "QUIRE_RERANK_REPO": "test/int8-onnx",
        "QUIRE_RERANK_MIN_LOGIT": "-1e9",
    }
    with run_stack(tmp, dist=built_spa(), **env) as running:
        with httpx.Client(base_url=running.web, timeout=60) as http:
            r = http.post("/api/documents", files={"files": ("harbor-notes.md", NOTE.encode())})
            assert r.status_code == 202, r.text
            doc = r.json()["files"][0]["document_id"]
            wait_until(
                lambda: http.get(f"/api/documents/{doc}").json()["status"] == "ready",
                120,
                "the note to be ingested",
            )
        yield running


def ask(pg: Page) -> Any:
    """Ask QUESTION in a new conversation; the finished answer's article."""
    pg.goto("/chat")
    box = pg.get_by_label("Your question")
    box.fill(QUESTION)
    box.press("Enter")
    answer = pg.locator('article.message.assistant[aria-busy="false"]').last
    expect(answer.locator("a.cite").first).to_be_visible(timeout=60_000)
    return answer


def pull_and_watch(pg: Page, start: Any, name: str) -> list[float]:
    """Click ``start`` (a Pull button) and record the bar's values until the pull ends."""
    start.click()
    bar = pg.get_by_test_id("pull-progress")
    expect(bar).to_be_visible()
    values: list[float] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = pg.evaluate(SNAPSHOT, "")
        if seen["value"] is not None:
            values.append(seen["value"])
            if 0 < seen["value"] < 1 and seen["text"]:
                assert re.search(r"\d+% · [\d.]+ (MB|GB) of [\d.]+ GB", seen["text"]), seen
        if seen["ended"]:
            break
        time.sleep(0.05)
    expect(pg.get_by_test_id("pull-done")).to_contain_text(f"{name} is installed")
    return values


def use_and_answer(pg: Page, name: str) -> None:
    """Use ``name`` in Settings; the next answer is written by it."""
    row = pg.locator(f'[data-testid="model-row"][data-model="{name}"]')
    row.get_by_role("button", name="Use this model").click()
    expect(row.get_by_text("answers now")).to_be_visible()
    expect(pg.get_by_test_id("llm-mode")).to_contain_text("LLM")
    answer = ask(pg)
    expect(answer.get_by_test_id("answer")).to_contain_text(f"{name} writes:")
    expect(answer.locator(".mode")).to_contain_text(f"LLM · ollama:{name}")
    expect(answer.locator('a[href="/settings#s-answer"]')).to_have_count(0)


def test_no_model_then_pull_and_use_on_a_phone(
    browser: Browser, stack: Stack, server: FakeOllama
) -> None:
    pg, errors = phone_page(browser, stack.web)

    def fits() -> None:
        assert pg.evaluate("document.documentElement.scrollWidth") <= 392, pg.url

    # No chat model in the server: the answer is quoted, says so once, links to the setting.
    answer = ask(pg)
    text = answer.inner_text()
    expect(answer.locator(".mode")).to_contain_text("Extractive")
    expect(answer.locator('a[href="/settings#s-answer"]')).to_have_count(1)
    assert text.count("Extractive answer") == 1 and text.count("not installed") == 1, text
    assert not any(raw in text for raw in RAW), text
    expect(answer.locator(".notices li")).to_have_count(0)
    conversation = int(pg.url.rsplit("/", 1)[-1])
    messages = httpx.get(f"{stack.web}/api/conversations/{conversation}", timeout=10).json()
    message_id = messages["messages"][-1]["id"]
    exported = httpx.get(f"{stack.web}/api/messages/{message_id}/export", timeout=10).text
    assert exported.count("/settings#s-answer") == 1, exported
    assert not any(raw in exported for raw in RAW), exported
    fits()
    pg.screenshot(path=str(ARTIFACTS / "models-no-model-phone.png"), full_page=False)

    # The link leads to the setting: the server, no chat model yet, the recommendation.
    answer.locator('a[href="/settings#s-answer"]').click()
    expect(pg).to_have_url(re.compile(r"/settings#s-answer$"))
    found = pg.get_by_test_id("model-server")
    expect(found).to_contain_text(f"Ollama 0.12.3 at {server.url}")
    expect(found).to_contain_text("No chat model is installed")
    expect(found).to_contain_text("Left out, they only embed: nomic-embed-text:latest")
    pick = pg.get_by_test_id("recommendation")
    expect(pick).to_contain_text("Recommended for this machine")
    expect(pick).to_contain_text("GB of memory")
    name = pick.locator("strong").inner_text()
    fits()

    values = pull_and_watch(pg, pick.get_by_role("button", name=f"Pull {name}"), name)
    assert any(0 < v < 1 for v in values), values  # seen moving, not only done
    assert values == sorted(values), values
    fits()
    pg.screenshot(path=str(ARTIFACTS / "models-pulled-phone.png"), full_page=True)
    use_and_answer(pg, name)
    fits()
    pg.context.close()
    assert not errors, errors


def test_pull_another_and_use_it_on_a_desktop(page: Page, stack: Stack, server: FakeOllama) -> None:
    pg = page
    pg.goto("/settings#s-answer")
    expect(pg.get_by_test_id("model-row")).not_to_have_count(0)

    # Bad names and a server that goes away mid-pull are said plainly; nothing is installed.
    other = pg.get_by_label("Another model")
    server.registry = {"phi3:mini"}
    other.fill("llama9:400b")
    pg.get_by_role("button", name="Pull", exact=True).click()
    expect(pg.get_by_test_id("pull-error")).to_contain_text(
        "llama9:400b was not pulled: Ollama has no model called 'llama9:400b'"
    )
    server.pull_cut_after = 3
    other.fill("phi3:mini")
    pg.get_by_role("button", name="Pull", exact=True).click()
    expect(pg.get_by_test_id("pull-error")).to_contain_text("stopped answering during the pull")
    expect(pg.locator('[data-testid="model-row"][data-model="phi3:mini"]')).to_have_count(0)

    # Then it works: the bar moves, the model is listed, and it writes the next answer.
    server.pull_cut_after = None
    values = pull_and_watch(pg, pg.get_by_role("button", name="Pull", exact=True), "phi3:mini")
    assert any(0 < v < 1 for v in values), values
    expect(pg.get_by_test_id("pull-error")).to_have_count(0)
    pg.screenshot(path=str(ARTIFACTS / "models-settings.png"), full_page=True)
    pg.goto("/settings#s-answer")
    use_and_answer(pg, "phi3:mini")
    chosen = httpx.get(f"{stack.web}/api/models", timeout=10).json()["choice"]
    assert chosen == {"backend": "ollama", "url": server.url, "model": "phi3:mini"}


def test_download_the_reranker_and_search_reranks_with_it(
    browser: Browser,
    page: Page,
    stack: Stack,
    hub: FakeHub,  # noqa: F811 - the fixture imported above
) -> None:
    """On a phone: the reranker is not installed, Download shows a bar that moves through the
    download, the status ends "loaded", the chat's Rerank option says the cross-encoder
    reorders, and a search reranks with it. On a desktop: Update finds it up to date."""
    pg, errors = phone_page(browser, stack.web)
    pg.goto("/chat")
    pg.locator("details.options summary").click()
    expect(pg.get_by_test_id("rerank-hint")).to_contain_text("no cross-encoder is loaded")
    pg.get_by_test_id("rerank-hint").get_by_role("link", name="Download one").click()
    expect(pg).to_have_url(re.compile(r"/settings#s-reranker$"))
    row = pg.get_by_test_id("reranker-setup")
    expect(row.get_by_test_id("reranker-status")).to_have_text("not installed")

    hub.pace_s = 0.15  # the model's 2 MB in 16 parts over 2.4 s: the bar is seen moving
    try:
        button = row.get_by_role("button", name="Download reranker")
        button.focus()
        pg.keyboard.press("Enter")  # by keyboard, as any button
        expect(pg.get_by_test_id("reranker-progress")).to_be_visible()
        values: list[float] = []
        texts: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            seen = pg.evaluate(SNAPSHOT, "reranker-")
            if seen["value"] is not None and 0 < seen["value"] < 1 and seen["text"]:
                values.append(seen["value"])
                texts.append(seen["text"])
            if seen["ended"]:
                break
            time.sleep(0.05)
    finally:
        hub.pace_s = 0.0
    assert values, "the bar was never seen between 0 and 100%"
    assert any(re.search(r"\.onnx: \d+% · [\d.]+ (KB|MB) of [\d.]+ MB", t) for t in texts), texts
    expect(pg.get_by_test_id("reranker-pull-done")).to_contain_text("search reranks with it now")
    expect(row.get_by_test_id("reranker-status")).to_have_text("loaded")
    expect(row.get_by_role("button", name="Update reranker")).to_be_enabled()
    assert pg.evaluate("document.documentElement.scrollWidth") <= 392
    pg.screenshot(path=str(ARTIFACTS / "models-reranker-phone.png"), full_page=True)

    pg.goto("/chat")
    pg.locator("details.options summary").click()
    expect(pg.get_by_test_id("rerank-hint")).to_have_text(
        "Reorder the best passages before answering, by the cross-encoder."
    )
    expect(pg.locator('input[name="rerank"]')).to_be_enabled()
    pg.context.close()
    assert not errors, errors

    result = httpx.post(f"{stack.web}/api/search", json={"query": "Marigold reef"}, timeout=30)
    report = result.json()["rerank"]
    assert report is not None and report["scored"] >= 1 and report["model"].endswith(".onnx")
    health = httpx.get(f"{stack.web}/api/health", timeout=10).json()["reranker"]
    assert health["loaded"] is True and health["error"] is None

    page.goto("/settings#s-reranker")
    page.get_by_role("button", name="Update reranker").click()
    expect(page.get_by_test_id("reranker-pull-done")).to_contain_text(
        "The reranker is up to date; search reranks with it now."
    )
    page.screenshot(path=str(ARTIFACTS / "models-reranker.png"), full_page=True)


def test_no_server_says_how_to_get_one(page: Page, fake: FakeOllama) -> None:
    """With nothing listening (the fake stopped: this module's last test), Settings gives the
    install command for each system."""
    fake.stop()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/settings#s-answer")
    none = page.get_by_test_id("no-server")
    expect(none).to_contain_text("No model server is running here")
    expect(none).to_contain_text("curl -fsSL https://ollama.com/install.sh | sh")
    expect(none).to_contain_text("brew install ollama")
    expect(none).to_contain_text("winget install Ollama.Ollama")
    expect(none).to_contain_text("ollama serve")
    expect(page.get_by_role("button", name="Look again")).to_be_enabled()
    assert page.evaluate("document.documentElement.scrollWidth") <= 392
