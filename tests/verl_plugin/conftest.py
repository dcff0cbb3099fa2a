"""veRL tests: `make test-verl` runs them in .venv-verl (veRL 0.9.1, transformers < 5.11, Ray).

Where veRL is missing (the main .venv) every module here skips. `make test-verl` sets ABSTAIN_REQUIRE_VERL=1:
then veRL must import, or the run fails here instead of skipping.
"""

from __future__ import annotations

import os

if os.environ.get("ABSTAIN_REQUIRE_VERL") == "1":
    import verl  # noqa: F401 - a broken veRL install fails the run


def pytest_configure(config) -> None:
    # veRL announces every optional engine it lacks (megatron, mindspeed, automodel) on import
    config.addinivalue_line("filterwarnings", "ignore:.* engine is not available:UserWarning")
