"""The domain error tree. The API maps each class to one HTTP status in one handler.

    QuireError
    ├── InputError                 400  the request or file cannot be used as given
    │   ├── UnsupportedFileType    415  content is not PDF, EPUB, Perplexity markdown, md or txt
    │   ├── EmptyFile              400
    │   ├── FileTooLarge           413
    │   ├── CorruptFile            422  truncated PDF, broken zip, unsafe XML ...
    │   ├── EncryptedFile          422
    │   ├── NeedsJavaScript        422  a fetched page shows its text only through scripts
    │   └── UnknownName            422  a name Quire has nothing by (a citation style)
    ├── Forbidden                  403  not allowed here (a setting keeps it off)
    │   └── FetchRefused                a link to an address Quire does not fetch (SSRF)
    ├── FetchFailed                502  a link could not be fetched (no answer, HTTP error)
    ├── NotFound                   404
    │   └── ModelNotInLibrary           Ollama's library has no model by that name (a pull)
    ├── Conflict                   409
    │   └── PullInProgress              a pull of the same model is running (the CLI, the API)
    ├── ResourceLimit              422  a per-document limit (time, pages, unpacked size) was hit
    └── ServiceUnavailable         503  a dependency is down
        ├── EmbedderUnavailable         the embedding model cannot be loaded or reached
        │   └── ModelNotPulled          an Ollama model is missing: run `ollama pull X`
        ├── OcrUnavailable              tesseract or poppler is not installed
        ├── LLMUnavailable              no LLM answered (down, timeout, HTTP error) before output
        │   ├── LLMModelNotPulled       the configured chat model is missing: `ollama pull X`
        │   └── LLMInterrupted          the LLM's stream broke after output had started
        ├── OllamaNotRunning            no Ollama answers where Quire looked (to pull a model)
        └── PullFailed                  Ollama refused a pull, or stopped answering during it

Transient errors (``retryable = True``) are retried by the worker; the others fail the job.
Every error reaches a client as one :class:`ErrorBody`: inside the HTTP envelope
``{"error": …}``, in a chat stream's ``error`` event, and in an MCP error result.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ErrorBody(BaseModel):
    """What a client is told about an error."""

    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    status: int
    code: str
    message: str
    detail: Any = None


class QuireError(Exception):
    """Base of every error Quire raises on purpose."""

    status_code = 500
    code = "internal_error"
    retryable = False

    def __init__(self, message: str, *, detail: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def body(self) -> ErrorBody:
        """This error as a client sees it."""
        return ErrorBody(
            status=self.status_code, code=self.code, message=self.message, detail=self.detail
        )


class InputError(QuireError):
    status_code = 400
    code = "bad_input"


class UnsupportedFileType(InputError):
    status_code = 415
    code = "unsupported_type"


class EmptyFile(InputError):
    code = "empty_file"


class FileTooLarge(InputError):
    status_code = 413
    code = "too_large"


class CorruptFile(InputError):
    status_code = 422
    code = "corrupt_file"


class EncryptedFile(InputError):
    status_code = 422
    code = "encrypted_file"


class NeedsJavaScript(InputError):
    """A web page whose text its scripts draw: Quire never runs them (formats/web.py)."""

    status_code = 422
    code = "needs_javascript"


class UnknownName(InputError):
    """A name Quire has nothing by, such as a citation style; the message says where the
    names are listed."""

    status_code = 422
    code = "unknown_name"


class Forbidden(QuireError):
    status_code = 403
    code = "forbidden"


class FetchRefused(Forbidden):
    code = "fetch_refused"


class FetchFailed(QuireError):
    status_code = 502
    code = "fetch_failed"


class NotFound(QuireError):
    status_code = 404
    code = "not_found"


class OriginalMissing(QuireError):
    """A document's original file is not in the store (which is there): its job fails, the
    file route answers 404."""

    status_code = 404
    code = "not_found"


class Conflict(QuireError):
    status_code = 409
    code = "conflict"


class PullInProgress(Conflict):
    """Another pull of the same model is running (``quire models pull``, or Settings)."""

    code = "pull_in_progress"


class ResourceLimit(QuireError):
    status_code = 422
    code = "resource_limit"


class ServiceUnavailable(QuireError):
    status_code = 503
    code = "unavailable"
    retryable = True


class EmbedderUnavailable(ServiceUnavailable):
    code = "embedder_unavailable"


class StoreUnavailable(ServiceUnavailable):
    """The originals store (QUIRE_ORIGINALS_DIR, a shared mount) cannot be reached: a job
    waits for it, however long, instead of failing."""

    code = "store_unavailable"


class ModelNotPulled(EmbedderUnavailable):
    code = "model_not_pulled"
    retryable = False


class OcrUnavailable(ServiceUnavailable):
    code = "ocr_unavailable"
    retryable = False


class LLMUnavailable(ServiceUnavailable):
    code = "llm_unavailable"


class LLMModelNotPulled(LLMUnavailable):
    code = "llm_model_not_pulled"
    retryable = False


class ModelNotInLibrary(NotFound):
    """Ollama's library has no model by that name (``pull model manifest: file does not
    exist``)."""

    code = "model_not_in_library"


class OllamaNotRunning(ServiceUnavailable):
    """No Ollama answers where Quire looked for one."""

    code = "ollama_not_running"
    retryable = False


class PullFailed(ServiceUnavailable):
    """Ollama refused or broke off a pull: its own words, and what to do."""

    code = "pull_failed"
    retryable = False


class LLMInterrupted(LLMUnavailable):
    code = "llm_interrupted"
    retryable = False
