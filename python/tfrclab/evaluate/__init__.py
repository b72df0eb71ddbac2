"""``tfrclab evaluate``: a congestion control algorithm's scorecard against RFC 9743.

A battery of simulated criteria (:mod:`tfrclab.evaluate.criteria`) on one dumbbell template
(:mod:`tfrclab.evaluate.battery`), each with its scenario, its metric over seeds with a 95%
interval, and a verdict decided on that interval against a threshold written beside the
sentence of RFC 9743 (or of another source, named) that asks for it
(:mod:`tfrclab.evaluate.verdict`). The scorecard is written as Markdown, self-contained HTML
and JSON (:mod:`tfrclab.evaluate.scorecard`). docs/evaluation.md describes every criterion.

>>> from tfrclab.evaluate import parse_algorithm
>>> parse_algorithm("tcp:variant=cubic").table["preset"]
'linux'
"""

from __future__ import annotations

from tfrclab._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from tfrclab.evaluate.algorithm import Algorithm, parse_algorithm, parse_competitors
    from tfrclab.evaluate.battery import FULL, QUICK, BatteryPlan, Network
    from tfrclab.evaluate.criteria import CRITERIA, NOT_EVALUATED, Criterion, Row
    from tfrclab.evaluate.scorecard import Scorecard, evaluate, write_scorecard
    from tfrclab.evaluate.verdict import Threshold, Value, Verdict, decide

# Imported when first used: the CLI imports tfrclab.evaluate.cli at every start.
__getattr__ = lazy_exports(
    __name__,
    {
        "Algorithm": "algorithm",
        "parse_algorithm": "algorithm",
        "parse_competitors": "algorithm",
        "FULL": "battery",
        "QUICK": "battery",
        "BatteryPlan": "battery",
        "Network": "battery",
        "CRITERIA": "criteria",
        "NOT_EVALUATED": "criteria",
        "Criterion": "criteria",
        "Row": "criteria",
        "Scorecard": "scorecard",
        "evaluate": "scorecard",
        "write_scorecard": "scorecard",
        "Threshold": "verdict",
        "Value": "verdict",
        "Verdict": "verdict",
        "decide": "verdict",
    },
)

__all__ = [
    "CRITERIA",
    "FULL",
    "NOT_EVALUATED",
    "QUICK",
    "Algorithm",
    "BatteryPlan",
    "Criterion",
    "Network",
    "Row",
    "Scorecard",
    "Threshold",
    "Value",
    "Verdict",
    "decide",
    "evaluate",
    "parse_algorithm",
    "parse_competitors",
    "write_scorecard",
]
