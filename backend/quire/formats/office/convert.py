"""LibreOffice, headless, as a converter: a legacy ``.doc``/``.ppt``/``.xls``/``.rtf`` to the
Office Open XML the readers know, and a document to the PDF the source view shows.

Each conversion runs ``soffice`` in a session of its own with a fresh profile directory
(``-env:UserInstallation``), so that parallel conversions never share a profile lock and a
document's macros meet the default security level of a new profile (unsigned macros are never
run); the whole session is killed when the time limit passes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from quire.config import Settings
from quire.errors import CorruptFile, ResourceLimit, UnsupportedFileType

log = logging.getLogger(__name__)

#: The Debian packages that give LibreOffice without a GUI, by what they read.
PACKAGES = {
    "doc": "libreoffice-writer-nogui",
    "rtf": "libreoffice-writer-nogui",
    "ppt": "libreoffice-impress-nogui",
    "xls": "libreoffice-calc-nogui",
}
#: Slides to PDF with the hidden ones too, so that page N of the rendition is slide N.
SLIDES_TO_PDF = 'impress_pdf_Export:{"ExportHiddenSlides":{"type":"boolean","value":"true"}}'
INSTALL_HINT = (
    "apt install libreoffice-writer-nogui libreoffice-impress-nogui libreoffice-calc-nogui"
)
#: A legacy format's name, and the Office Open XML kind it is converted to.
LEGACY_TARGET = {"doc": "docx", "rtf": "docx", "ppt": "pptx", "xls": "xlsx"}
LEGACY_NAMES = {
    "doc": "a legacy Word document (.doc)",
    "rtf": "an RTF document",
    "ppt": "a legacy PowerPoint presentation (.ppt)",
    "xls": "a legacy Excel workbook (.xls)",
}


def soffice(settings: Settings) -> str | None:
    """The LibreOffice command to run, or None when it is not installed (or turned off)."""
    if not settings.soffice:
        return None
    return shutil.which(settings.soffice)


def version(command: str) -> str | None:
    """``LibreOffice 7.4.7.2 …`` as the command reports it, or None when it does not run."""
    try:
        out = subprocess.run(
            [command, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = out.stdout.strip().splitlines()
    return line[0] if line else None


def convert(
    src: Path,
    target: str,
    out_dir: Path,
    *,
    command: str,
    timeout_s: float,
    suffix: str = "",
    export: str = "",
    memory_mb: int | None = None,
) -> Path:
    """Convert ``src`` to ``target`` (``pdf``, ``docx``…) in ``out_dir``; the converted file.

    ``suffix``: the extension the input is shown to LibreOffice under (its own by default);
    ``export``: the export filter and its options, ``impress_pdf_Export:{…}``; ``memory_mb``: an
    address-space limit for LibreOffice (``prlimit``), as extraction has (QUIRE_JOB_MEMORY_MB).

    ResourceLimit when it takes longer than ``timeout_s``; CorruptFile when LibreOffice gives
    no file (it cannot read the input)."""
    with tempfile.TemporaryDirectory(prefix="quire-soffice-") as work:
        # LibreOffice names its output after the input: a copy under a plain name keeps a
        # hostile or odd file name off the command line.
        suffix = "".join(c for c in suffix or src.suffix if c.isalnum() or c == ".")[:8]
        plain = Path(work) / f"input{suffix}"
        os.symlink(src.resolve(), plain)
        limit = shutil.which("prlimit") if memory_mb else None
        args = [
            *([limit, f"--as={memory_mb << 20}", "--"] if limit and memory_mb else []),
            command,
            f"-env:UserInstallation={Path(work, 'profile').as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--convert-to",
            f"{target}:{export}" if export else target,
            "--outdir",
            str(Path(work, "out")),
            str(plain),
        ]
        with subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # soffice forks soffice.bin: the session is killed whole
            env={**os.environ, "HOME": work},
        ) as proc:
            try:
                output, _ = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise ResourceLimit(
                    f"LibreOffice took longer than the {timeout_s:g} s conversion limit "
                    "(QUIRE_CONVERT_TIMEOUT_S)"
                ) from None
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        made = sorted(Path(work, "out").glob(f"*.{target}"))
        if not made or made[0].stat().st_size == 0:
            said = output.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise CorruptFile(f"LibreOffice could not convert the file to {target} ({said[0]})")
        out_dir.mkdir(parents=True, exist_ok=True)
        dest = out_dir / f"{src.stem}.{target}"
        shutil.move(made[0], dest)
        return dest


def convert_legacy(src: Path, legacy: str, out_dir: Path, settings: Settings) -> Path:
    """A legacy file converted to its Office Open XML kind in ``out_dir``; UnsupportedFileType
    naming the package to install when LibreOffice is not there."""
    command = soffice(settings)
    if command is None:
        raise UnsupportedFileType(
            f"Unsupported file type: {LEGACY_NAMES[legacy]} is read through LibreOffice, which "
            f"is not installed: apt install {PACKAGES[legacy]} (or set QUIRE_SOFFICE)"
        )
    log.info("converting %s (%s) with LibreOffice", src.name, legacy)
    target = LEGACY_TARGET[legacy]
    timeout = settings.convert_timeout_s
    return convert(
        src,
        target,
        out_dir,
        command=command,
        timeout_s=timeout,
        suffix=f".{legacy}",
        memory_mb=settings.job_memory_mb,
    )
