"""Snakemake's job echo in lines that fit a terminal (issue 32 item 3).

Every rule declares the code and config files its script reads as inputs (``code_inputs``), so
that editing one reruns exactly its jobs; Snakemake 9 echoes each job with its whole input list
(lines of up to 6,292 characters), and the dry-run reason summary with up to 50 rule names on a
line. :func:`install` adds a filter to Snakemake's logger that rewrites each record before any
handler formats it: file lists keep their data files while they fit, then ``+N more``, and the
code/config files become ``+N code/config files``; a long shell command keeps its start and its
redirection with ``[+N more arguments]`` between; any other long line is wrapped. Nothing is
dropped from the workflow: the inputs stay declared, only the echo is shortened (the failed job's
shell command is printed whole, to be rerun by hand); ``FILTERLAB_FULL_ECHO=1`` turns it off.
"""

from __future__ import annotations

import logging
import os
import textwrap
from collections.abc import Sequence

from snakemake_interface_logger_plugins.common import LogEvent

#: The longest line the echo aims at (a list or command is cut to about this many characters).
WIDTH = 160
#: Path prefixes of the repository's code and config files (the ``code_inputs`` of a rule).
CODE_PREFIXES = ("accounting/", "experiments/", "config/")
#: Set to 1 in the environment for Snakemake's own echo (every file listed).
FULL_ECHO = "FILTERLAB_FULL_ECHO"
#: Job record fields that hold file lists (Snakemake 9 ``Job.log_info`` / ``get_log_error_info``).
FILE_FIELDS = ("input", "output", "log")


def compact_files(files: Sequence[str], width: int = WIDTH, count_code: bool = True) -> list[str]:
    """``files`` as a short list: the files while they fit in ``width`` characters, then
    ``+N more``; with ``count_code``, the code/config files (:data:`CODE_PREFIXES`) are
    counted at the end instead of listed."""
    code = [f for f in files if count_code and f.startswith(CODE_PREFIXES)]
    listed = [f for f in files if not (count_code and f.startswith(CODE_PREFIXES))]
    shown: list[str] = []
    used = 0
    for name in listed:
        if shown and used + len(name) + 2 > width:
            break
        shown.append(name)
        used += len(name) + 2
    if len(shown) < len(listed):
        shown.append(f"+{len(listed) - len(shown)} more")
    if code:
        shown.append(f"+{len(code)} code/config file{'s' if len(code) > 1 else ''}")
    return shown


def compact_reason(reason: str, width: int = WIDTH) -> str:
    """A job's reason (``Label: f1, f2; Label: ...``) in about ``width`` characters: each
    file list cut to its first files (code files included: an edited one is named) and
    ``+N more``, the parts sharing the width."""
    parts = reason.split("; ")
    share = max(width // len(parts), 60)
    cut_parts = []
    for part in parts:
        label, sep, files = part.partition(": ")
        if sep and len(part) > share:
            cut = compact_files(files.split(", "), share - len(label), count_code=False)
            part = f"{label}: {', '.join(cut)}"
        cut_parts.append(part)
    return "; ".join(cut_parts)


def compact_command(command: str, width: int = WIDTH) -> str:
    """A shell command longer than ``1.5 width`` cut to its first words (about ``width``
    characters), ``[+N more arguments]``, and its redirection (from the first ``>`` word on)."""
    if len(command) <= 1.5 * width:
        return command
    words = command.split(" ")
    cut = next((i for i, w in enumerate(words) if w.startswith(">")), len(words))
    head, tail = words[:cut], words[cut:]
    kept: list[str] = []
    for word in head:
        if kept and len(" ".join([*kept, word])) > width:
            break
        kept.append(word)
    return " ".join([*kept, f"[+{len(head) - len(kept)} more arguments]", *tail])


def wrap(text: str, width: int = WIDTH) -> str:
    """Each line of ``text`` longer than ``width`` wrapped, continued at its own indent."""
    lines = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        lines.extend(
            textwrap.wrap(
                line,
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            if len(line) > width
            else [line]
        )
    return "\n".join(lines)


class CompactEcho(logging.Filter):
    """Shortens Snakemake's job records in place (see the module docstring); passes all."""

    def filter(self, record: logging.LogRecord) -> bool:
        event = getattr(record, "event", None)
        if event in (LogEvent.JOB_INFO, LogEvent.JOB_ERROR):
            for name in FILE_FIELDS:
                files = getattr(record, name, None)
                if isinstance(files, list):
                    setattr(record, name, compact_files([str(f) for f in files]))
            reason = getattr(record, "reason", None)
            if isinstance(reason, str):
                record.reason = compact_reason(reason)
        elif event == LogEvent.SHELLCMD:
            for name in ("cmd", "shellcmd"):
                if isinstance(getattr(record, name, None), str):
                    setattr(record, name, compact_command(getattr(record, name)))
            if isinstance(record.msg, str) and record.msg.startswith("Shell command: "):
                record.msg = "Shell command: " + compact_command(record.msg[15:])
        elif isinstance(record.msg, str) and not record.args and event is None:
            record.msg = wrap(record.msg)
        return True


def install(logger: logging.Logger) -> None:
    """Add :class:`CompactEcho` to ``logger`` once (a Snakefile may be parsed again), unless
    the environment sets ``FILTERLAB_FULL_ECHO=1`` (every file listed, e.g. to parse a plan)."""
    if os.environ.get(FULL_ECHO) == "1":
        return
    if not any(isinstance(f, CompactEcho) for f in logger.filters):
        logger.addFilter(CompactEcho())
