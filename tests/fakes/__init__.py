"""Protocol-faithful fakes of external services, served over real HTTP on 127.0.0.1."""

from tests.fakes.chat import Reply, echo
from tests.fakes.ollama import FakeOllama, FakeOllamaModel, RecordedRequest, create_app, unused_url

__all__ = [
    "FakeOllama",
    "FakeOllamaModel",
    "RecordedRequest",
    "Reply",
    "create_app",
    "echo",
    "unused_url",
]
