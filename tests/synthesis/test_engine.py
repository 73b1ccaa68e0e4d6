"""The answer engine's rules, in-process and fast: the real ChatEngine and LLMRouter over
scripted chat backends and a searcher that returns given hits (tests/fakes/llm.py). The same
rules end to end, over HTTP with the fake Ollama server: tests/api/test_chat_llm.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quire.config import Settings
from quire.llm.base import REPLY_TOKENS, estimate_tokens
from quire.llm.router import LLMRouter
from quire.retrieval.options import RetrievalOptions
from quire.storage.db import Database
from quire.storage.migrate import open_database
from quire.synthesis.answer import ChatRequest
from quire.synthesis.engine import ChatEngine
from quire.synthesis.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    PlanEvent,
    RetrievalEvent,
    SourcesEvent,
    StartEvent,
    TokenEvent,
    VerifyEvent,
)
from tests.fakes.chat import Reply
from tests.fakes.llm import FakeSearcher, ScriptedChat, hit
from tests.fakes.rag_model import RagModel

pytestmark = pytest.mark.anyio

QUESTION = "What did the White Rabbit take out of its waistcoat-pocket?"
PASSAGES = [
    "The White Rabbit took a watch out of its waistcoat-pocket, and looked at it.",
    "Alice had never before seen a rabbit with either a waistcoat-pocket or a watch.",
    "The Rabbit hurried on down the long passage, and Alice followed it.",
    "She found herself in a long, low hall, lit up by a row of lamps.",
    "There was a table with a little golden key on it, and the Rabbit had gone.",
    "The key was too small for the doors, but it fitted a curtain's little door.",
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Database]:
    database = open_database(Settings(data_dir=tmp_path_factory.mktemp("engine")))
    yield database
    database.dispose()


def hits() -> list[Any]:
    """One passage per page, pages 1..6."""
    return [hit(i + 1, text, page=i + 1) for i, text in enumerate(PASSAGES)]


def engine(
    db: Database, searcher: FakeSearcher, *backends: ScriptedChat, settings: Settings | None = None
) -> ChatEngine:
    router = LLMRouter(list(backends)) if backends else None
    return ChatEngine(db, settings or Settings(data_dir=Path("unused")), searcher, router)


async def answer(engine: ChatEngine, request: ChatRequest | None = None) -> list[Event]:
    prepared = await asyncio.to_thread(engine.prepare, request or ChatRequest(message=QUESTION))
    return [event async for event in engine.stream(prepared)]


def one(events: list[Event], kind: type[Any]) -> Any:
    found = [e for e in events if isinstance(e, kind)]
    assert len(found) == 1, (kind, found)
    return found[0]


def text_of(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TokenEvent))


async def test_the_stream_is_typed_and_ends_done_with_the_model_that_answered(db: Database) -> None:
    rag = RagModel()
    events = await answer(engine(db, FakeSearcher(hits()), ScriptedChat(rag.reply)))
    assert isinstance(events[0], StartEvent) and isinstance(events[-1], DoneEvent)
    assert [type(e).__name__ for e in events[:3]] == ["StartEvent", "PlanEvent", "RetrievalEvent"]
    done = one(events, DoneEvent)
    assert done.mode == "llm" and done.model == "ollama:llama3.2"
    assert done.answer == text_of(events) and done.citations
    assert one(events, VerifyEvent).status == "ok"
    assert rag.seen[0] == "plan" and rag.seen[-1] == "verify"


async def test_every_prompt_fits_a_small_context_and_the_answer_says_what_was_left_out(
    db: Database,
) -> None:
    long = [hit(i + 1, (text + " ") * 20, page=i + 1) for i, text in enumerate(PASSAGES * 5)]
    chat = ScriptedChat(RagModel().reply, context_tokens=2048)
    events = await answer(engine(db, FakeSearcher(long), chat))
    done = one(events, DoneEvent)
    assert done.mode == "llm"
    assert any(
        n.startswith("To fit the model's 2,048-token context, ") and "of 30 passages were left" in n
        for n in done.notices
    ), done.notices
    # Each call left the reply its room (what the Ollama client sizes num_ctx by).
    assert all(estimate_tokens(m) + REPLY_TOKENS <= 2048 for m in chat.messages)
    maps = [p for purpose, p in chat.prompts if purpose == "map"]
    assert len(maps) <= 3  # 30 passages: never more calls than batches of ten make


async def test_one_fact_of_many_passing_the_filter_keeps_four(db: Database) -> None:
    rag = RagModel(overrides={"filter": json.dumps({"relevant": [3]})})
    # Every passage shares a word with this question, so the map gives one fact each.
    events = await answer(
        engine(db, FakeSearcher(hits()), ScriptedChat(rag.reply)),
        ChatRequest(message="the Rabbit, Alice, the watch, the hall, the key and the door"),
    )
    sources = one(events, SourcesEvent).sources
    # The one chosen (passage 3) and the three best-ranked others, in rank order.
    assert [s.chunk_id for s in sources] == [1, 2, 3, 4]
    assert [s.n for s in sources] == [1, 2, 3, 4]


async def test_the_map_step_reads_each_passage_where_its_question_terms_are(db: Database) -> None:
    filler = "The hall was long and low and nothing in it moved at all that day. " * 22
    answer_at = len(filler)
    text = filler + PASSAGES[0]  # the answer beyond the first 1,200 characters
    focus = (answer_at + 4, answer_at + len(PASSAGES[0]) - 10)
    for where, expect in ((focus, True), (None, False)):
        chat = ScriptedChat(RagModel().reply)
        await answer(engine(db, FakeSearcher([hit(1, text, focus=where)]), chat))
        (prompt,) = [p for purpose, p in chat.prompts if purpose == "map"]
        assert ("took a watch out of its waistcoat-pocket" in prompt) is expect
        passage = prompt.split("[1] ", 1)[1].split("\n")[1]
        assert len(passage) <= 1200


async def test_a_filter_that_keeps_nothing_keeps_every_fact(db: Database) -> None:
    rag = RagModel(overrides={"filter": json.dumps({"relevant": []})})
    events = await answer(
        engine(db, FakeSearcher(hits()), ScriptedChat(rag.reply)),
        ChatRequest(message="the Rabbit, Alice, the watch, the hall, the key and the door"),
    )
    assert len(one(events, SourcesEvent).sources) == len(PASSAGES)


async def test_facts_from_one_page_are_one_source(db: Database) -> None:
    same_page = [hit(1, PASSAGES[0], page=7), hit(2, PASSAGES[1], page=7), hit(3, PASSAGES[2])]
    events = await answer(engine(db, FakeSearcher(same_page), ScriptedChat(RagModel().reply)))
    sources = one(events, SourcesEvent).sources
    assert [(s.document_id, s.page) for s in sources] == [(1, 7), (1, 1)]
    assert sources[0].chunk_id == 1  # the best-ranked fact of the page


async def test_invented_citation_numbers_are_removed(db: Database) -> None:
    said = "The Rabbit took a watch out of its waistcoat-pocket [1], says the book [9]."
    rag = RagModel(overrides={"answer": said})
    searcher = FakeSearcher(hits()[:2])
    events = await answer(engine(db, searcher, ScriptedChat(rag.reply)))
    done = one(events, DoneEvent)
    assert "[9]" in text_of(events)  # streamed as the model wrote it
    assert done.answer == said.replace(" [9]", "") and done.citations == [1]
    check = done.citations_checked
    assert (check.checked, check.kept, check.dropped) == (2, 1, 1)
    assert check.dropped_citations[0].reason == "there is no source [9]"


async def test_a_missed_info_verdict_runs_one_more_round_that_extends_the_answer(
    db: Database,
) -> None:
    rag = RagModel(
        overrides={"verify": json.dumps({"status": "missed-info", "suggestion": "golden key"})}
    )
    more = [hit(9, "The White Rabbit dropped the golden key by the little door.", page=9)]
    searcher = FakeSearcher(hits()[:2], more={"golden key": more})
    events = await answer(engine(db, searcher, ScriptedChat(rag.reply)))
    rounds = [e.round for e in events if isinstance(e, RetrievalEvent)]
    assert rounds == [1, 2] and searcher.queries[1][0] == "golden key"
    first, second = [e.sources for e in events if isinstance(e, SourcesEvent)]
    assert [s.chunk_id for s in second] == [s.chunk_id for s in first] + [9]
    assert second[-1].n == len(first) + 1
    assert rag.seen.count("verify") == 1 and "addendum" in rag.seen
    assert text_of(events).endswith(f"[{len(first) + 1}].")


async def test_a_follow_up_is_rewritten_by_the_model_and_without_one_joined(db: Database) -> None:
    history = (("user", "Who is the White Rabbit?"), ("assistant", "A rabbit with a watch [1]."))
    follow_up = ChatRequest(message="Where did it go?", history=history, persist=False)
    with_llm = await answer(
        engine(db, FakeSearcher(hits()), ScriptedChat(RagModel().reply)), follow_up
    )
    assert one(with_llm, StartEvent).standalone_question == "Where did it go? (rewritten)"
    without = await answer(engine(db, FakeSearcher(hits())), follow_up)
    assert (
        one(without, StartEvent).standalone_question == "Who is the White Rabbit? Where did it go?"
    )


async def test_a_junk_or_failing_plan_falls_back_to_the_heuristic_one(db: Database) -> None:
    junk = RagModel(overrides={"plan": '{"queries": {"bad": 1}}'})
    events = await answer(engine(db, FakeSearcher(hits()), ScriptedChat(junk.reply)))
    assert one(events, PlanEvent).source == "heuristic"
    assert "the model's plan was unusable: heuristic plan used." in one(events, DoneEvent).notices
    failing = RagModel(overrides={"plan": lambda _: Reply(status=500, error="plan crashed")})
    events = await answer(engine(db, FakeSearcher(hits()), ScriptedChat(failing.reply)))
    assert one(events, PlanEvent).source == "heuristic"
    assert any("planned without the model" in n for n in one(events, DoneEvent).notices)


async def test_a_model_failing_before_any_text_gives_the_extractive_answer(db: Database) -> None:
    rag = RagModel(overrides={"answer": lambda _: Reply(status=500, error="runner crashed")})
    events = await answer(engine(db, FakeSearcher(hits()), ScriptedChat(rag.reply)))
    done = one(events, DoneEvent)
    assert done.mode == "extractive" and done.model is None
    assert done.extractive_reason == "the language model failed before answering (see the log)."
    assert not any("runner crashed" in n for n in [done.answer, *done.notices])  # the log's
    assert "waistcoat-pocket" in done.answer and done.citations


async def test_a_break_after_text_is_an_error_event_and_the_partial_answer_is_stored(
    db: Database,
) -> None:
    rag = RagModel(
        overrides={"answer": lambda _: Reply("The Rabbit took out a watch", error_after=3)}
    )
    events = await answer(engine(db, FakeSearcher(hits()), ScriptedChat(rag.reply)))
    error = events[-1]
    assert isinstance(error, ErrorEvent) and error.error.code == "llm_interrupted"
    assert text_of(events) == "The Rabbit took"
    with db.read() as conn:
        stored = conn.exec_driver_sql(
            "SELECT status, content FROM messages WHERE id = ?", (error.message_id,)
        ).one()
    assert tuple(stored) == ("interrupted", "The Rabbit took")


async def test_the_document_filter_is_checked_once_before_the_stream(db: Database) -> None:
    searcher = FakeSearcher(hits(), known_documents={1})
    chat = engine(db, searcher)
    request = ChatRequest(message=QUESTION, options=RetrievalOptions(document_ids=(1,)))
    await answer(chat, request)
    assert len(searcher.checked) == 1 and searcher.queries[0][1].document_ids == (1,)
    from quire.errors import NotFound

    with pytest.raises(NotFound, match="no such document: 2"):
        chat.prepare(ChatRequest(message=QUESTION, options=RetrievalOptions(document_ids=(2,))))


async def test_two_answers_at_once_each_report_the_backend_that_answered_them(
    db: Database,
) -> None:
    """Answer A streams from the first backend; meanwhile answer B finds that backend failing
    (it marks it down) and is answered by the second, and so is A's verification after its
    answer. Each reports the backend that wrote its answer: a router-wide "last backend used"
    would give A the second one."""
    slow, other = "Why is the Rabbit late?", "What is on the little table?"

    def first_backend(prompt: str) -> str | Reply:
        if other in prompt or "Does the answer fully address" in prompt:
            return Reply(status=500, error="overloaded")
        reply = RagModel().reply(prompt)
        if "Answer the question using ONLY" in prompt:  # A's answer: slowly, piece by piece
            return Reply(str(reply), token_delay_s=0.05)
        return reply

    ollama = ScriptedChat(first_backend, name="ollama", model="llama3.2")
    vllm = ScriptedChat(lambda p: RagModel().reply(p), name="openai", model="qwen2.5")
    chat = engine(db, FakeSearcher(hits()), ollama, vllm)
    a_started = asyncio.Event()

    async def ask_a() -> list[Event]:
        prepared = await asyncio.to_thread(chat.prepare, ChatRequest(message=slow))
        out = []
        async for event in chat.stream(prepared):
            out.append(event)
            if isinstance(event, TokenEvent):
                a_started.set()
        return out

    async def ask_b() -> list[Event]:
        await a_started.wait()
        return await answer(chat, ChatRequest(message=other))

    a_events, b_events = await asyncio.gather(ask_a(), ask_b())
    assert one(a_events, DoneEvent).model == "ollama:llama3.2"
    assert one(b_events, DoneEvent).model == "openai:qwen2.5"
    assert any(p[0] == "answer" and other in p[1] for p in vllm.prompts)
    assert any(p[0] == "verify" and slow in p[1] for p in vllm.prompts)


async def test_nothing_found_is_not_reported_as_the_models_answer(db: Database) -> None:
    events = await answer(engine(db, FakeSearcher([]), ScriptedChat(RagModel().reply)))
    assert one(events, StartEvent).mode == "llm"  # a model was there to answer
    done = one(events, DoneEvent)
    assert done.answer == "Nothing in your library matches this question."
    assert done.mode == "extractive" and done.model is None
