"""The errors a Perplexity sync can end with (each a quire.errors class, so the API maps them).

Conflict (409)
├── LoginRequired          no saved login, or Perplexity answered 401/403: log in again
│   └── LoggedOut          0 threads listed after earlier syncs found some; nothing changed
└── SyncRunning            another sync holds the lock
ServiceUnavailable (503)
└── PerplexityUnavailable  Chromium cannot start, the site cannot be reached, or it kept
                           answering 429/5xx after every retry
SyncCancelled (503)        the sync was asked to stop (server shutdown); the next resumes
"""

from __future__ import annotations

from quire.errors import Conflict, QuireError, ServiceUnavailable

LOGIN_HINT = "run `quire perplexity login`"


class LoginRequired(Conflict):
    code = "perplexity_login_required"


class LoggedOut(LoginRequired):
    code = "perplexity_logged_out"


class SyncRunning(Conflict):
    code = "perplexity_sync_running"


class PerplexityUnavailable(ServiceUnavailable):
    code = "perplexity_unavailable"


class SyncCancelled(QuireError):
    status_code = 503
    code = "perplexity_sync_cancelled"
