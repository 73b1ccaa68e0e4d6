"""Every prompt Quire sends to an LLM, in one place.

Written for small local models (3-8B): short, one task per prompt, the output format shown
literally, JSON only where a structure is needed (and then parsed leniently, with a fallback
for junk). Placeholders are ``str.format`` fields; literal braces are doubled.
"""

from quire.llm.base import Message

SYSTEM = (
    "You are Quire, a careful research assistant. You only use the numbered sources you are "
    "given and you never invent facts, page numbers or sources."
)


def messages(prompt: str) -> list[Message]:
    """A prompt as it is sent: the system message, then the prompt as the user's."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]


PLAN_PROMPT = """You plan a search over a person's documents.
Question: {query}

Reply with JSON only, no prose:
{{"strategy": "precise" or "exhaustive",
 "queries": [three short rephrasings of the question],
 "hard_keywords": [exact identifiers, names, numbers or codes that must appear],
 "hyde_passage": "two or three sentences that a document answering the question might contain"}}
Use "exhaustive" only when the question asks for many items, a list, or a comparison."""

REWRITE_PROMPT = """Rewrite the last question so that it can be understood without the \
conversation: replace "it", "they", "that" and similar words with what they refer to.
Keep it short. Reply with the rewritten question only, on one line.

Conversation:
{history}

Last question: {question}
Rewritten question:"""

MAP_PROMPT = """Question: {question}

Below are {count} numbered passages from the user's documents.
For each passage that helps answer the question, write ONE short fact taken from that passage.
Skip passages that do not help. Do not combine passages. Copy names and numbers exactly.

{passages}

Reply with JSON only, in this form:
{{"facts": [{{"node_id": 1, "fact": "..."}}, {{"node_id": 4, "fact": "..."}}]}}
If no passage helps, reply {{"facts": []}}."""

FILTER_PROMPT = """Question: {question}

Numbered facts:
{facts}

Which facts are relevant to the question? Reply with JSON only:
{{"relevant": [numbers of the relevant facts]}}"""

ANSWER_PROMPT = """Answer the question using ONLY the numbered sources below.
After every sentence, cite the sources it relies on in square brackets, like [1] or [2][3].
Use only the numbers listed. If the sources do not answer the question, say so plainly.
Write in the language of the question. Use short paragraphs or a list; no preamble.

Sources:
{sources}

Question: {question}
Answer:"""

ADDENDUM_PROMPT = """You already answered the question below. More sources were found.
Add only what the new sources say that the answer lacks, in one to three sentences, citing
them like [{first}]. Use only the numbers listed. Do not repeat the earlier answer.

Question: {question}

Earlier answer:
{answer}

New sources:
{sources}

Addition:"""


VERIFY_PROMPT = """Question: {question}

Answer given:
{answer}

Does the answer fully address the question? Reply with JSON only:
{{"status": "ok"}} when it does, or
{{"status": "missed-info", "suggestion": "a short search query for what is missing"}}"""

# Extractive mode (no LLM): the heading above the quoted sentences.
EXTRACTIVE_HEADER = (
    "*Extractive answer: {why} The sentence from your documents that answers, quoted as "
    "written, then what supports it.*\n\n"
)
