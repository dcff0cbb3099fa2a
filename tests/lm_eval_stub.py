"""An lm-eval model for the harness tests: it answers from a function and keeps every request's arguments.

    lm = answering_lm(lambda request: "\\\\boxed{4}", name="echo")
    simple_evaluate(model=lm, tasks=[...])
    lm.sent  # [(context, gen_kwargs), ...] in the order lm-eval sent them

``apply_chat_template`` writes the chat as JSON, so a test can count the turns lm-eval built.
"""

from __future__ import annotations

import json
from typing import Callable


def answering_lm(answer: Callable[[object], str], name: str):
    """An ``lm_eval.api.model.LM`` whose ``generate_until`` returns ``answer(request)`` for each request."""
    from lm_eval.api.model import LM

    class AnsweringLM(LM):
        def __init__(self):
            super().__init__()
            self.sent = []

        def generate_until(self, requests, disable_tqdm=False):
            self.sent += [r.args for r in requests]
            return [answer(r) for r in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def apply_chat_template(self, chat_history, add_generation_prompt=True):
            return json.dumps(chat_history)

        @property
        def tokenizer_name(self):
            return name

        def chat_template(self, chat_template=False):
            return name

    return AnsweringLM()
