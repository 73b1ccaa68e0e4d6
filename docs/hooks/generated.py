"""MkDocs hook: the pages generated when the site is built, so none is committed and none can
go stale.

    using/cli.md               the `quire` command's click help        (cli_page.py)
    running/configuration.md   every field of quire.config.Settings     (settings_page.py)
    benchmarks/<name>.md       bench/results/<name>.json, newest first  (bench_pages.py)

MkDocs puts this folder on sys.path while it loads the hook, hence the plain imports.
"""

from __future__ import annotations

from pathlib import Path

import bench_pages
import cli_page
import settings_page
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages to the site's files (the nav in mkdocs.yml names them)."""
    root = Path(config.config_file_path).parent
    pages = {
        "using/cli.md": cli_page.render(),
        "running/configuration.md": settings_page.render(),
        **bench_pages.render_all(root / "bench" / "results"),
    }
    for src_uri, content in pages.items():
        files.append(File.generated(config, src_uri, content=content))
    return files
