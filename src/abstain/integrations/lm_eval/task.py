"""The lm-eval task class of abstain's task YAMLs (``class: !function abstain.integrations.lm_eval.task.AbstainTask``).

lm-eval hands a task its generation settings (``--gen_kwargs``, ``--num_fewshot``) after it is built, and the
request options (``--apply_chat_template``, ``--fewshot_as_multiturn``, ``--system_instruction``) only when it
builds the requests, and a ``process_results`` function sees neither. :class:`AbstainTask` is lm-eval's own
``ConfigurableTask`` with three additions, so that a run records what it sent and refuses what abstain would not
honour before a single request goes out:

* at construction, ``--metadata '{"abstain": {"max_tokens": N}}'`` becomes ``max_gen_toks: N`` and the task's
  ``shots`` its default ``num_fewshot`` (``--num_fewshot`` may then be left out);
* :meth:`AbstainTask.build_all_requests` checks the settings
  (:meth:`abstain.integrations.generation.LmEvalRun.check`: no chat template, another number of demonstrations,
  a system instruction or two token budgets are refused; a warning is logged for what is only recorded) and keeps
  the ``generation`` block;
* :meth:`AbstainTask.process_results` passes that block to :func:`abstain.integrations.lm_eval.hooks.process_results`,
  which stores it beside the scored row in the sample (``abstain import lm-eval`` reads it).

This module imports lm-eval; lm-eval imports it through the YAMLs.

Example::

    lm_eval --include_path "$(abstain lm-eval-path)" --tasks abstain_quick_idk --gen_kwargs max_gen_toks=32 ...
    # each sample of --log_samples then holds {"generation": {"max_tokens": 32, "chat_template": true, ...}}
"""

from __future__ import annotations

import logging
from typing import Any

from lm_eval.api.task import ConfigurableTask

from abstain.integrations.generation import LmEvalRun
from abstain.integrations.lm_eval.hooks import harness_task, process_results

__all__ = ["AbstainTask"]

log = logging.getLogger(__name__)


class AbstainTask(ConfigurableTask):
    """lm-eval's ``ConfigurableTask``, checking and recording the generation settings of the run."""

    def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
        config = {k: v for k, v in (config or {}).items() if k != "class"}
        super().__init__(config=config, **kwargs)
        options = (self.config.metadata or {}).get("abstain") or {}
        self.harness = harness_task(self.config.metadata or {})
        self.asked_max_tokens: int | None = options.get("max_tokens")
        if self.asked_max_tokens is not None:
            self.config.generation_kwargs = {**(self.config.generation_kwargs or {}),
                                             "max_gen_toks": int(self.asked_max_tokens)}
        if self.harness.shots and self.config.num_fewshot is None:
            self.config.num_fewshot = self.harness.shots
        self.generation: dict[str, Any] | None = None

    def build_all_requests(self, *, apply_chat_template: bool = False, fewshot_as_multiturn: bool = False,
                           system_instruction: str | None = None, **kwargs: Any) -> None:
        run = LmEvalRun(gen_kwargs=dict(self.config.generation_kwargs or {}),
                        apply_chat_template=bool(apply_chat_template), num_fewshot=int(self.config.num_fewshot or 0),
                        fewshot_as_multiturn=bool(fewshot_as_multiturn), system_instruction=system_instruction)
        for warning in run.check(self.harness.shots, self.asked_max_tokens):
            log.warning("%s: %s", self.config.task, warning)
        self.generation = run.generation()
        super().build_all_requests(apply_chat_template=apply_chat_template, fewshot_as_multiturn=fewshot_as_multiturn,
                                   system_instruction=system_instruction, **kwargs)

    def process_results(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        if not callable(self.config.process_results):  # --predict_only replaced the metrics with its bypass
            return super().process_results(doc, results)
        return process_results(doc, results, generation=self.generation)
