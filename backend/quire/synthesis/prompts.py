"""Every prompt Quire sends to an LLM, in one place (written for small local models:
short, explicit, JSON where a structure is needed)."""

PLAN_PROMPT = """You plan a search over a person's documents.
Question: {query}

Reply with JSON only, no prose:
{{"strategy": "precise" or "exhaustive",
 "queries": [three short rephrasings of the question],
 "hard_keywords": [exact identifiers, names, numbers or codes that must appear],
 "hyde_passage": "two or three sentences that a document answering the question might contain"}}
Use "exhaustive" only when the question asks for many items, a list, or a comparison."""
