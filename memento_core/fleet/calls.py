"""What the tick calls of the fleet (SPEC §12 "Across machines"): tick/run.py's steps and the
architect name these, each living in the module the package's table says."""

from .docs import commit_own_docs
from .host import enabled
from .integrate import clean_leftovers
from .pick import pick
from .publish import publish
from .stale import foreign_claims
from .sync import finish, push_for_architect, refresh, sync_for_architect

__all__ = ["clean_leftovers", "commit_own_docs", "enabled", "finish", "foreign_claims", "pick", "publish",
           "push_for_architect", "refresh", "sync_for_architect"]
