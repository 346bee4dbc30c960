"""An exception inside an attempt is that attempt's failure, never a crash loop (SPEC §13).

Without this, anything unforeseen after the claim (an odd file name, a folder
replaced by a link, a full disk in the middle of a step) escaped the tick,
which exited 2 with the task left `[~]`, no retry counted: the next tick found
the claim stale, reset it, tried again and crashed the same way, forever.
:func:`attempt_safely` turns the exception into a recorded failure (the entry,
the rollback, a retry, the breaker's count) through the tick's own
``record_failure``; if even that fails, the claim is left for the next tick's
recovery, which counts the retry.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable

from ..lines import safe_text
from ..runlog import cron_log
from ..workspace import mend_own_folders
from .context import Interrupted, TaskResult, TickContext
from .files import append_log
from .gitstate import RepositoryGone


def attempt_safely(ctx: TickContext, at, work: Callable[[], TaskResult],
                   record_failure: Callable[..., TaskResult]) -> TaskResult:
    """``work()``; on an exception, ``record_failure`` of the attempt ``at`` with its reason."""
    try:
        return work()
    except (Interrupted, KeyboardInterrupt, SystemExit):
        raise
    except RepositoryGone as exc:  # no repository to record anything in: the tick ends here, exit 2
        _log(ctx, traceback.format_exc())
        cron_log(ctx.ws, f"{at.task.id}: {safe_text(str(exc))}; the tick stopped, the next one's recovery "
                         "counts the attempt once .git is back")
        raise
    except Exception as exc:  # noqa: BLE001 - the point: whatever it is, it is this attempt's failure
        reason = f"Memento failed during the attempt ({type(exc).__name__}: {safe_text(str(exc))[:300]})"
        mend_own_folders(ctx.root)  # so that the failure can be written down
        _log(ctx, traceback.format_exc())
        try:
            return record_failure(ctx, at, reason, time.monotonic() - at.began, None, "", {})
        except Exception as again:  # noqa: BLE001
            _log(ctx, traceback.format_exc())
            cron_log(ctx.ws, f"{at.task.id}: could not record the failure ({type(again).__name__}: "
                             f"{safe_text(str(again))[:200]}); the next tick's recovery counts it")
            return TaskResult(at.task.id, False, reason)


def _log(ctx: TickContext, text: str) -> None:
    try:
        append_log(ctx.log_path, "\n[memento] " + text)
    except OSError:
        pass
