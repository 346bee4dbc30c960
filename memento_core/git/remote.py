"""What a remote said when it refused a push (SPEC §12): the fleet's leased push and a phase's
push of ``land = "pr"`` read it in one place.
"""

from __future__ import annotations

import re


def remote_said(out: str, *, any_rejection: bool = False) -> str:
    """What a remote said when it refused a push (``out``: git push's stdout and stderr): its
    ``remote:`` lines, then git's reason for each ``[remote rejected]`` ref (``any_rejection``: also
    git's own ``[rejected]``, a lease or fast-forward check), joined with "; "; '' when it said nothing."""
    said = [line[len("remote:"):].strip() for line in out.splitlines() if line.startswith("remote:")]
    said = [s for s in said if s]
    pattern = r"\[(?:remote )?rejected\] \(([^)]*)\)" if any_rejection else r"\[remote rejected\] \(([^)]*)\)"
    reasons = sorted(set(re.findall(pattern, out)))
    return "; ".join(said + [f"({r})" for r in reasons])
