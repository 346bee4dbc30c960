"""The drafter's prompt (SPEC §17): the brief, the plan and the map as they are, the repository's
file list (capped, and saying so), after the system prompt of scripts/plan_system_prompt.md."""

from __future__ import annotations

import re

from ...git.run import run_git
from ...prompt import read_capped
from ...workspace import Workspace

MAX_DOC_CHARS = 60_000  # the plan and the map; beyond that the drafter reads the file itself
MAX_FILES = 500  # the file list; the rest is counted
MAX_FILES_CHARS = 30_000
SYSTEM_PROMPT = "plan_system_prompt.md"


def system_prompt(ws: Workspace) -> str:
    """scripts/plan_system_prompt.md, or the bundled one when the project has none."""
    text = read_capped(ws.plan_prompt_path, MAX_DOC_CHARS)
    if text:
        return text
    from importlib import resources

    return resources.files("memento_core").joinpath("templates", SYSTEM_PROMPT).read_text(encoding="utf-8").strip()


def fenced(text: str, info: str = "") -> list[str]:
    """``text`` in a backtick fence longer than any backtick run inside it (it cannot close early)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, text.rstrip("\n"), fence]


def file_list(ws: Workspace) -> list[str]:
    """``git ls-files`` of the project, at most MAX_FILES names, the cut said in its last line."""
    try:
        raw = run_git(ws.root, ["ls-files", "-z"], check=False).stdout
    except (OSError, ValueError):
        return ["(the file list could not be read)"]
    names = [n for n in raw.decode("utf-8", "surrogateescape").split("\0") if n]
    shown: list[str] = []
    size = 0
    for name in names[:MAX_FILES]:
        clean = name.encode("utf-8", "replace").decode("utf-8")
        size += len(clean) + 1
        if size > MAX_FILES_CHARS:
            break
        shown.append(clean)
    if not names:
        return ["(no files are tracked yet)"]
    if len(shown) < len(names):
        shown.append(f"… and {len(names) - len(shown)} more files not shown (cut at {len(shown)} of "
                     f"{len(names)}; run `git ls-files` for all)")
    return shown


def build_draft_prompt(ws: Workspace, brief: str, brief_name: str, *, include_system: bool = True) -> str:
    """The whole prompt as text (the system prompt first unless the preset takes it by flag)."""
    out: list[str] = []
    if include_system:
        out += [system_prompt(ws), "", "---", ""]
    out += [f"# Draft the plan from the brief ({brief_name})", "",
            f"Work in `{ws.root}`. You may change only docs/MASTER_PLAN.md and docs/PROJECT_MAP.md.", ""]
    out += ["## The brief", "", *fenced(brief, "text"), ""]
    out += ["## docs/MASTER_PLAN.md (as it is now)", "",
            *fenced(read_capped(ws.plan_path, MAX_DOC_CHARS) or "(missing)", "markdown"), ""]
    out += ["## docs/PROJECT_MAP.md (as it is now)", "",
            *fenced(read_capped(ws.map_path, MAX_DOC_CHARS) or "(missing)", "markdown"), ""]
    out += ["## The repository's files (git ls-files)", "", *fenced("\n".join(file_list(ws)), "text"), ""]
    return "\n".join(out).rstrip() + "\n"
