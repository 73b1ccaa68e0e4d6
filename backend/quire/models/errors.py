"""Why a pull failed, each error saying what to do about it.

QuireError
├── NotFound ── RepoNotFound          no such repo or revision (or private/gated: HF_TOKEN)
├── Conflict ── PullInProgress        another pull of the same model is running (quire.errors:
│                                     the API says so too, without importing this package)
├── CorruptFile ── NotAModel          a file is not a model, or the check failed
├── ResourceLimit ── DiskFull         not enough space (checked before, and ENOSPC during)
└── ServiceUnavailable
    ├── HubUnreachable                no network / offline with nothing cached / broke off
    └── ConverterMissing              conversion needs `pip install 'quire[models]'`
"""

from __future__ import annotations

from quire.errors import CorruptFile, NotFound, PullInProgress, ResourceLimit, ServiceUnavailable

__all__ = [
    "EXTRA",
    "ConverterMissing",
    "DiskFull",
    "HubUnreachable",
    "NotAModel",
    "PullInProgress",
    "RepoNotFound",
]

#: What to install for the conversions.
EXTRA = "pip install 'quire[models]'"


class RepoNotFound(NotFound):
    """The repo or revision does not exist on the hub (or is private or gated)."""

    code = "model_repo_not_found"


class NotAModel(CorruptFile):
    """What was fetched is not a usable cross-encoder."""

    code = "not_a_model"


class DiskFull(ResourceLimit):
    """Not enough free space for the download or the conversion."""

    code = "disk_full"


class HubUnreachable(ServiceUnavailable):
    """The hub cannot be reached (or is off limits: HF_HUB_OFFLINE) and nothing is cached."""

    code = "hub_unreachable"
    retryable = False


class ConverterMissing(ServiceUnavailable):
    """The repo needs a conversion whose packages (the ``models`` extra) are not installed."""

    code = "converter_missing"
    retryable = False
