"""The one build step pyproject.toml cannot state: the built web app goes into the wheel.

``python -m build --wheel`` (``make wheel``) copies ``frontend/dist`` — built beforehand by
``make frontend`` — into the package as ``quire/web_app/`` (not ``quire/web/``: that is the
package that fetches links), which ``quire up`` serves. Without a built web app the wheel
build stops with the command that builds it. An editable install
(``pip install -e .``, ``make install``) copies nothing: a checkout serves ``frontend/dist``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

WEB_APP = Path(__file__).resolve().parent / "frontend" / "dist"


class BuildWithWebApp(build_py):
    """setuptools' build_py, then ``frontend/dist`` copied to ``quire/web_app/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        index = WEB_APP / "index.html"
        # The placeholder page (frontend/placeholder) has no Vue mount point: not the app.
        if not index.is_file() or 'id="app"' not in index.read_text(encoding="utf-8"):
            raise SystemExit(
                f"the web app is not built ({index} is missing or not the Vue app): "
                "run `make frontend` first, or `make wheel`, which builds both"
            )
        target = Path(self.build_lib) / "quire" / "web_app"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(WEB_APP, target)


setup(cmdclass={"build_py": BuildWithWebApp})
