"""Working through the forge (SPEC §19): GitHub issues in, status comments back.

``github``: the one client module (REST, the token, retries, pagination, the repository a
remote's URL names). ``issue_block``: an issue's title and its fenced ```memento block, read
into plan fields (pure). ``importer``: `memento plan import github`. ``records``: what the imports wrote. ``comments``: one comment
per task and change of state, kept pending until it lands. ``pulls``: each phase's branch and pull
request (``land = "pr"``), as last seen.
"""
