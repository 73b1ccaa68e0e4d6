"""Language models: Ollama and OpenAI-compatible chat servers behind one router (base.py).

router = make_router(settings)          # None when QUIRE_LLM_BACKENDS=none
text = await router.complete(messages, purpose="plan", json_mode=True)
"""

from quire.llm.base import ChatBackend, Message, ModelInfo, Usage, backend_label
from quire.llm.router import LLMRouter, make_router

__all__ = [
    "ChatBackend",
    "LLMRouter",
    "Message",
    "ModelInfo",
    "Usage",
    "backend_label",
    "make_router",
]
