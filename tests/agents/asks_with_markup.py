#!/usr/bin/env python3
"""Fake agent: asks a question whose text carries markup a GitHub comment would act on (a fence,
an HTML tag, a mention, a control character) and two choices, and exits 0.

usage: asks_with_markup.py
"""

from pathlib import Path

question = Path(".memento/worker/question.md")
question.parent.mkdir(parents=True, exist_ok=True)
question.write_text("Which store should this use? ```` close the fence <b>bold</b> @here \x1b[31mred\n\n"
                    "- [ ] sqlite\n- [ ] postgres <!-- hidden -->\n", encoding="utf-8")
print("asked")
