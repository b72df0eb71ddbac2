"""ns-2.35 as a referee: each claim's measure on the same scenarios and seeds run in ns-2.35.

For a sweep experiment (``reproduce --referee ns2``) every cell's scenario is exported
(:mod:`tfrclab.ns2.export`) and run in ns-2.35 for each seed of the plan the claims were decided
on; the script's output becomes datasets of the sweep's shape (:func:`ns2_sweep_data`: per-bin
``flow_series`` and ``link_series``, per-flow ``runs``, per-link ``links``), the experiment's
own ``analyze`` reads them, and each claim's own ``measure`` gives ns-2's value with its 95%
interval. Nothing about a claim is restated for ns-2: the same code measures both.

What ns-2 can express is decided per cell: a cell the exporter refuses keeps its refusal, and a
claim that reads such a cell has no ns-2 value (``not exportable``, with the refusals). Which
cells a claim reads is found, not declared: the claim is measured on ns-2's datasets with the
refused cells' netsim runs beside them, and again with those cells moved far up, far down, to
NaN (:func:`_perturbed`) and swapped for exported cells of the same scenario; a claim whose
value moves in any probe reads a refused cell. The probes search, they do not prove: a claim
could read a refused cell in a way none of them moves.

The agreement verdict compares the two means with Welch's t, as ``tfrclab crosscheck`` does
(:func:`tfrclab.ns2.crosscheck.compare`), from each side's mean, 95% half-width and seeds, and
decides on the whole 95% interval of the difference (netsim - ns-2) against a band of
:data:`AGREEMENT` times the larger mean: ``agree`` when the interval lies inside it, ``differ``
when it lies wholly outside, ``inconclusive`` when it crosses an edge. A value without an
interval is decided on the difference alone, except that one seed on either side never gives
``differ`` (a single run's difference may be its own noise: ``inconclusive``), while a close
match on one seed does agree. ns-2's value is also judged against the claim's own tolerance
(``ns2_verdict``), so a reader sees whether the paper's statement holds in ns-2.35 as well.

Where the two simulators' datasets differ by construction: ns-2's ``sent_packets`` and
``sent_bytes`` are counted entering the flow's first link (its flow monitor), netsim's at the
sender; both are the same unless the access link drops. ns-2's datasets hold only what the
exported script prints (docs/crosscheck.md); a measure that reads another column has no ns-2
value (``not comparable``, naming the column).
"""

from __future__ import annotations

import gzip
import hashlib
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tfrclab.reproduce.claims import Claim, ClaimResult, Measurement, Verdict, judge
from tfrclab.reproduce.registry import Experiment, Plan, scenario_path

__all__ = [
    "AGREEMENT",
    "AGREEMENTS",
    "NS2_TIMEOUT_S",
    "Agreement",
    "RefereeResult",
    "agreement",
    "analyze_or_error",
    "measure_or_nan",
    "ns2_sweep_data",
    "referee_ns2",
]

Agreement = Literal["agree", "differ", "inconclusive", "not exportable", "not comparable"]
"""How ns-2.35's value of a claim's measure compares with tfrclab's (module documentation)."""

AGREEMENTS: tuple[Agreement, ...] = (
    "agree",
    "differ",
    "inconclusive",
    "not exportable",
    "not comparable",
)
"""Every agreement verdict, in the order the reports count them."""

AGREEMENT = 0.1
"""The band within which the two simulators' means agree: a tenth of the larger of the two
(in absolute value), fixed before any run. ``tfrclab crosscheck``'s default is 2% on raw
metrics; a claim's measure is often a ratio or a derived figure over few seeds, where 2% would
call every run-to-run wobble a disagreement."""

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RefereeResult:
    """ns-2.35's value of one claim's measure beside tfrclab's, and their agreement."""

    measured: Measurement
    """ns-2's value (NaN when there is none)."""
    agreement: Agreement
    reason: str
    """Why, in words: the interval of the difference against the band, or the refusals."""
    difference: float = math.nan
    """tfrclab's mean minus ns-2's."""
    difference_ci: tuple[float, float] | None = None
    """The 95% Welch interval of the difference; None without one."""
    ns2_verdict: Verdict | None = None
    """The claim's verdict on ns-2's value (its own tolerance); None without a value."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values (the ``ns2`` entry of a claim in claims.json)."""
        return {
            **self.measured.as_dict(),
            "agreement": self.agreement,
            "difference": None if math.isnan(self.difference) else self.difference,
            "difference_ci": None if self.difference_ci is None else list(self.difference_ci),
            "band": AGREEMENT,
            "verdict": self.ns2_verdict,
            "reason": self.reason,
        }

    def format(self) -> str:
        """ns-2's value and the agreement, for a report cell."""
        if self.agreement in ("not exportable", "not comparable"):
            return f"{self.agreement}: {self.reason}"
        return f"{self.measured.format()}: {self.agreement} ({self.reason})"


def _se(m: Measurement) -> tuple[float, int]:
    """The standard error behind a measurement's 95% half-width, and its degrees of freedom."""
    if math.isnan(m.half) or m.seeds < 2:
        return 0.0, 0
    from scipy.stats import t

    return m.half / float(t.ppf(0.975, m.seeds - 1)), m.seeds - 1


def agreement(mine: Measurement, theirs: Measurement, band: float = AGREEMENT) -> RefereeResult:
    """The agreement of tfrclab's ``mine`` and ns-2's ``theirs`` (module documentation)."""
    if math.isnan(mine.mean) or math.isnan(theirs.mean):
        return RefereeResult(theirs, "not comparable", "no value in one of the simulators")
    diff = mine.mean - theirs.mean
    edge = band * max(abs(mine.mean), abs(theirs.mean))
    se_a, df_a = _se(mine)
    se_b, df_b = _se(theirs)
    var = se_a**2 + se_b**2
    if var > 0:
        from scipy.stats import t

        parts = (se_a**4 / df_a if df_a else 0.0) + (se_b**4 / df_b if df_b else 0.0)
        df = var**2 / parts
        half = float(t.ppf(0.975, df)) * math.sqrt(var)
        low, high = diff - half, diff + half
        ci: tuple[float, float] | None = (low, high)
        shown = f"difference {diff:+.3g}, 95% interval [{low:+.3g}, {high:+.3g}]"
    else:
        low = high = diff
        ci = None
        shown = f"difference {diff:+.3g} (no interval)"
    within = f"±{edge:.3g} ({band:g} of the larger mean)"
    if -edge <= low and high <= edge:
        verdict: Agreement = "agree"
        reason = f"{shown} is inside {within}"
    elif high < -edge or low > edge:
        verdict = "differ"
        reason = f"{shown} is outside {within}"
    else:
        verdict = "inconclusive"
        reason = f"{shown} crosses the edge of {within}"
    if verdict == "differ" and min(mine.seeds, theirs.seeds) < 2:
        # One run a side: a difference beyond the band may be the runs' own noise.
        verdict = "inconclusive"
        reason += "; one seed cannot tell a difference from run-to-run noise"
    return RefereeResult(theirs, verdict, reason, diff, ci)


# -- ns-2's runs as sweep datasets -----------------------------------------------------------


NS2_TIMEOUT_S = 1200.0
"""Wall time one ns-2 run of a referee cell may take before it is stopped and the cell counts
as refused (the longest full-plan runs take about a minute on one core)."""


def _ns2_output(script: str, cache: Path, say: Progress, line_buffered: bool = False) -> str:
    """ns-2's output of ``script``, kept in ``cache`` (gzip, named by the script's hash).

    A cached output that cannot be read back is run again (said through ``say``);
    ``line_buffered`` as :func:`tfrclab.ns2.crosscheck.run_ns2`'s.

    Raises:
        RuntimeError: if ns-2 fails or runs past :data:`NS2_TIMEOUT_S`.
    """
    from tfrclab.ns2.crosscheck import run_ns2

    digest = hashlib.sha256(script.encode("utf-8")).hexdigest()[:20]
    path = cache / f"{digest}.out.gz"
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8")
        if text.startswith("H ") or "\nH " in text[:400]:
            return text
        say(f"repairing: {path} holds no ns-2 output; its run is made again")
    except FileNotFoundError:
        pass
    except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as err:
        say(f"repairing: {path} is damaged ({type(err).__name__}); its run is made again")
    text = run_ns2(script, timeout_s=NS2_TIMEOUT_S, line_buffered=line_buffered)
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    os.replace(tmp, path)
    return text


def ns2_sweep_data(
    relative: str,
    changes: Mapping[str, Any],
    seeds: Sequence[int],
    cache: Path,
    say: Progress,
    jobs: int = 1,
    drops: bool = False,
    state: Sequence[str] = (),
) -> Any:
    """One cell's runs in ns-2.35 as a :class:`~tfrclab.reproduce.runner.SweepData`.

    ``flow_series`` (``sent_packets``, ``sent_bytes``, ``received_bytes`` per flow and bin),
    ``link_series`` (``arrivals``, ``departures``, ``drops``, ``departed_bytes``,
    ``mean_queue_packets`` per binned link and bin), ``runs`` (per flow: ``id``, ``name``,
    ``kind``, the window, packets and bytes sent and received in it, the throughput, the fair
    share and the throughput normalized to it), ``classes`` (per seed and flow group, netsim's
    per-class table, :func:`tfrclab.summary.class_rows`) and ``links`` (per binned link over
    the window: ``name``, ``rate_bps``, ``arrivals``, ``drops``, ``departures``,
    ``bytes_departed``, ``throughput_bits_per_s``, ``utilization``, ``drop_rate``,
    ``mean_queue_packets``, by :mod:`tfrclab.metrics` as the cross-check takes them), at the
    scenario's own monitor bin.

    ns-2 prints no per-flow drops unless asked: with ``drops`` the script traces every drop at
    the primary link, and ``runs`` gains each flow's ``packets_dropped``, ``loss_events``,
    ``packet_loss_rate`` and ``loss_event_rate`` in the window, grouped into events by netsim's
    rule (:func:`tfrclab.ns2.loss_events.ns2_losses`), as do the ``classes``; without it those
    rates are NaN in ``classes`` and absent from ``runs``. The option changes the script, so
    it is asked for only by experiments that read losses (``Experiment.referee_drops``), and
    every other cell's cached outputs stay valid.

    With ``state`` (names of scenario flow entries, as ``Experiment.referee_state``), the
    script prints those flows' agents' protocol state (:mod:`tfrclab.ns2.export.agent_state`)
    and ``flow_series`` gains netsim's state trace columns of it
    (:func:`tfrclab.ns2.agent_state.state_columns`: ``rx_inv_theta_hat_sum``,
    ``rx_inv_theta_hat_samples``, ``rtt_s``, ``rtt_sum``, ``rtt_samples``, ``rto``,
    ``backoff``; NaN for other flows). A TCP flow's ``rtt_sum``/``rtt_samples`` sum its SRTT
    once per bin, not its raw samples: ns-2 binds no running sum of them. ``runs`` also has
    ``send_rate_bits_per_s`` (bytes entering the first link over the window) and ``status``
    (netsim's: ``""``, ``"partial"``, ``"not started"`` or ``"stopped"``, from the drawn start
    and stop).

    Outputs are kept in ``cache`` and reused while the script is the same; up to ``jobs``
    seeds run in ns-2 at once.

    Raises:
        ExportError: naming every part of the scenario ns-2 cannot run.
        NsNotFound: if ``ns`` is not on PATH.
        RuntimeError: if ns-2 fails on a seed or runs past :data:`NS2_TIMEOUT_S`.
    """
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    from tfrclab import metrics
    from tfrclab.ns2.agent_state import read_agent_state, state_columns
    from tfrclab.ns2.export import export_tcl
    from tfrclab.ns2.export.agent_state import traced_flows
    from tfrclab.ns2.loss_events import ns2_losses
    from tfrclab.ns2.output import read_output
    from tfrclab.ns2.plan import resolve
    from tfrclab.reproduce.runner import SweepData
    from tfrclab.scenario import Scenario
    from tfrclab.summary import class_rows

    scenario = Scenario.load(scenario_path(relative))
    if changes:
        scenario = scenario.with_(**changes)
    bin_s = scenario.bin_s
    start_s, end_s = scenario.measure_s
    flow_frames, link_frames, run_frames, window_frames, class_frames = [], [], [], [], []
    plans = [resolve(scenario, seed, strict=False) for seed in seeds]
    traced = [traced_flows(plan, state) if state else {} for plan in plans]
    scripts = [
        export_tcl(plan, bin_s, drop_trace=drops, agent_state=list(flows))
        for plan, flows in zip(plans, traced, strict=True)
    ]
    # ns-2 runs in its own process, so threads run the seeds side by side; the outputs are
    # read back in seed order, and the first failure (in seed order) is raised.
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(scripts)))) as pool:
        texts = list(pool.map(lambda script: _ns2_output(script, cache, say, bool(state)), scripts))
    for seed, plan, text, flows_traced in zip(seeds, plans, texts, traced, strict=True):
        series = read_output(text, plan)
        n = series.samples
        times = np.arange(n) * bin_s
        names = [flow.name for flow in plan.flows]
        sent_packets = (
            series.sent_packets if series.sent_packets is not None else np.zeros((len(names), n))
        )
        columns: dict[str, Any] = {}
        if state:
            agents = read_agent_state(text, flows_traced)
            if agents.unattributed or agents.malformed:
                say(
                    f"ns-2 seed {seed}: agent prints left out: {agents.unattributed} naming no "
                    f"flow, {agents.malformed} unreadable"
                )
            columns = {
                key: value.reshape(-1)
                for key, value in state_columns(agents, plan, n, bin_s).items()
            }
        flow_frames.append(
            pd.DataFrame(
                {
                    "seed": seed,
                    "flow": np.repeat(np.asarray(names, dtype=object), n),
                    "time_s": np.tile(times, len(names)),
                    "sent_packets": sent_packets.reshape(-1),
                    "sent_bytes": series.sent_bytes.reshape(-1),
                    "received_bytes": series.received_bytes.reshape(-1),
                    **columns,
                }
            )
        )
        for index, link in sorted(series.links.items()):
            link_frames.append(
                pd.DataFrame(
                    {
                        "seed": seed,
                        "link": plan.links[index].name,
                        "time_s": times,
                        "arrivals": link.arrivals,
                        "departures": link.departures,
                        "drops": link.drops,
                        "departed_bytes": link.departed_bytes,
                        "mean_queue_packets": link.mean_queue,
                    }
                )
            )
        window = (times >= start_s - 1e-9) & (times < end_s - 1e-9)
        width = float(window.sum()) * bin_s
        rows = []
        for index, link in sorted(series.links.items()):
            rate = float(plan.links[index].rate_bps)
            departed = float(link.departed_bytes[window].sum())
            arrivals, dropped = float(link.arrivals[window].sum()), float(link.drops[window].sum())
            rows.append(
                {
                    "seed": seed,
                    "name": plan.links[index].name,
                    "rate_bps": rate,
                    "arrivals": arrivals,
                    "drops": dropped,
                    "departures": float(link.departures[window].sum()),
                    "bytes_departed": departed,
                    "throughput_bits_per_s": departed * 8.0 / width if width else np.nan,
                    "utilization": float(metrics.link_utilization(departed * 8.0, rate, width)),
                    "drop_rate": float(metrics.drop_rate(dropped, arrivals)),
                    "mean_queue_packets": float(link.mean_queue[window].mean()),
                }
            )
        window_frames.append(pd.DataFrame(rows))
        received = series.received_bytes[:, window].sum(axis=1)
        throughput = received * 8.0 / width if width else np.full(len(names), np.nan)
        packets_sent = sent_packets[:, window].sum(axis=1)
        bytes_sent = series.sent_bytes[:, window].sum(axis=1)
        losses: dict[str, Any] = {}
        if drops:
            lost = ns2_losses(plan, text, series, range(len(names)), start_s, start_s + width)
            lost_packets = np.array([lost[i].dropped_packets for i in range(len(names))])
            events = np.array([lost[i].loss_events for i in range(len(names))])
            losses = {
                "packets_dropped": lost_packets,
                "loss_events": events,
                "packet_loss_rate": metrics.packet_loss_rate(lost_packets, packets_sent),
                "loss_event_rate": metrics.loss_event_rate(events, packets_sent),
            }
        flows = _flow_shares(plan, (start_s, start_s + width), throughput, losses)
        run_frames.append(
            pd.DataFrame(
                {
                    "seed": seed,
                    "id": np.arange(len(names)),
                    "name": names,
                    "kind": [flow.kind for flow in plan.flows],
                    "window_from_s": start_s,
                    "window_to_s": end_s,
                    "packets_sent": packets_sent,
                    "bytes_sent": bytes_sent,
                    "bytes_received": received,
                    "send_rate_bits_per_s": bytes_sent * 8.0 / width if width else np.nan,
                    "status": flows["status"],
                    "throughput_bits_per_s": throughput,
                    "fair_share_bits_per_s": flows["fair_share_bits_per_s"],
                    "normalized_throughput": flows["normalized_throughput"],
                    **losses,
                }
            )
        )
        class_frames.append(pd.DataFrame(class_rows(flows)).assign(seed=seed))
    return SweepData(
        runs=pd.concat(run_frames, ignore_index=True),
        classes=pd.concat(class_frames, ignore_index=True),
        links=pd.concat(window_frames, ignore_index=True),
        flow_series=pd.concat(flow_frames, ignore_index=True),
        link_series=pd.concat(link_frames, ignore_index=True),
        bin_s=bin_s,
    )


_VARIANT_DEFAULTS = {"tcp": "sack", "web": "reno", "short_tcp": "reno", "tfrc": "rfc5348"}
"""The variant (TFRC: preset) netsim gives a flow that names none, for its class label."""


def _flow_shares(
    plan: Any,
    window: tuple[float, float],
    throughput: np.ndarray,
    losses: Mapping[str, Any],
) -> dict[str, Any]:
    """Per-flow columns of ns-2's run for :func:`tfrclab.summary.class_rows`, as netsim's.

    Each flow's group and class, whether it is background traffic, the fraction of the window
    it was active (from the start and stop netsim drew), its fair share on its tightest link
    (:func:`tfrclab.summary.fair_shares` over its data links) and its throughput over that
    share. Packet loss and loss event rates are those of ``losses`` (NaN without them: ns-2's
    output has per-flow drops only with a drop trace).
    """
    from tfrclab.summary import (
        BACKGROUND_KINDS,
        active_seconds,
        class_label,
        fair_shares,
        flow_status,
    )

    start_s, end_s = window
    length = end_s - start_s
    kinds = [flow.kind for flow in plan.flows]
    variants = [
        str(flow.table.get("preset" if flow.kind == "tfrc" else "variant", "") or
            _VARIANT_DEFAULTS.get(flow.kind, ""))
        for flow in plan.flows
    ]  # fmt: skip
    background = np.array(
        [bool(flow.table.get("background", flow.kind in BACKGROUND_KINDS)) for flow in plan.flows]
    )
    stop = [np.nan if f.stop_s is None else f.stop_s for f in plan.flows]
    active_s = active_seconds([f.start_s for f in plan.flows], stop, start_s, end_s)
    fraction = active_s / length if length > 0 else np.zeros(len(kinds))
    with np.errstate(divide="ignore", invalid="ignore"):
        active = np.where(active_s > 0, throughput * length / active_s, np.nan)
    rate = {link.name: float(link.rate_bps) for link in plan.links}
    paths = [[plan.links[i].name for i in flow.data_links] for flow in plan.flows]
    _, shares = fair_shares(paths, kinds, rate, fraction, background, throughput)
    with np.errstate(divide="ignore", invalid="ignore"):
        normalized = active / shares
    nothing = np.full(len(kinds), np.nan)
    return {
        "group": [
            str(flow.table.get("group", "") or class_label(kind, variant))
            for flow, kind, variant in zip(plan.flows, kinds, variants, strict=True)
        ],
        "kind": kinds,
        "variant": variants,
        "background": background,
        "status": flow_status([f.start_s for f in plan.flows], stop, fraction, *window),
        "active_fraction": fraction,
        "active_throughput_bits_per_s": active,
        "fair_share_bits_per_s": shares,
        "normalized_throughput": normalized,
        "packet_loss_rate": losses.get("packet_loss_rate", nothing),
        "loss_event_rate": losses.get("loss_event_rate", nothing),
    }


_FOREIGN_DATA_ERRORS = (
    ValueError,
    KeyError,
    IndexError,
    ZeroDivisionError,
    TypeError,
    AttributeError,
    AssertionError,
)
"""What an analysis written for netsim's datasets may raise on ns-2's or on perturbed copies (a
column ns-2 does not print, a NaN where it expects a count): the claim then has no value."""


_KEYS = ("seed", "time_s", "id", "window_from_s", "window_to_s", "flows", "rate_bps")
"""Columns that say which run, bin, flow or window a row is (and a link's rate), not what was
measured: left alone when a cell's numbers are perturbed."""


def _perturbed(data: Any, how: str) -> Any:
    """A copy of sweep datasets with every measured number moved, each by its own amount.

    ``how``: ``"up"``, x becomes x·(10 + U) + 10·(1 + U'); ``"down"``, x·U/10 - 1 - U', with U,
    U' uniform in [0, 1) drawn per value from a fixed stream; ``"nan"``, NaN. Not a common
    scale or shift (a CoV or a ratio moves too), and far, so that a cell read through a minimum
    or a maximum tends to become the one picked. The run, bin and window columns
    (:data:`_KEYS`) and non-numeric or boolean ones are left as they are.
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    rng = np.random.default_rng(20_011 if how == "up" else 20_012)

    def move(frame: Any) -> Any:
        out = frame.copy()
        for column in out.columns:
            dtype = out[column].dtype
            if column in _KEYS or not is_numeric_dtype(dtype) or is_bool_dtype(dtype):
                continue
            values = out[column].to_numpy(dtype=float)
            u, v = rng.uniform(0.0, 1.0, size=(2, values.size))
            if how == "up":
                out[column] = values * (10.0 + u) + 10.0 * (1.0 + v)
            elif how == "down":
                out[column] = values * u / 10 - 1 - v
            else:
                out[column] = np.nan
        return out

    return replace(
        data,
        runs=move(data.runs),
        classes=move(data.classes),
        links=move(data.links),
        flow_series=move(data.flow_series),
        link_series=move(data.link_series),
    )


def _same(a: Measurement, b: Measurement) -> bool:
    """Whether two measurements are the same numbers (NaN equal to NaN)."""
    return all(
        (math.isnan(x) and math.isnan(y)) or x == y for x, y in ((a.mean, b.mean), (a.half, b.half))
    )


def measure_or_nan(claim: Claim, analysis: Any) -> Measurement:
    """``claim``'s measure; NaN where it cannot be taken (a NaN input it turns into an error).

    For runs the claim was not written against (ns-2's, a sensitivity value's,
    :mod:`tfrclab.reproduce.sensitivity`): an error of :data:`_FOREIGN_DATA_ERRORS` becomes a
    measurement without a value, its note the error, so the claim is "not comparable" there.
    """
    try:
        with np.errstate(all="ignore"):
            return claim.measure(analysis)
    except _FOREIGN_DATA_ERRORS as err:
        return Measurement(math.nan, math.nan, 0, f"{type(err).__name__}: {err}")


def analyze_or_error(experiment: Experiment, data: Any, plan: Plan) -> tuple[Any, str]:
    """The experiment's analysis of ``data``; (None, the error) when it cannot be made.

    As :func:`measure_or_nan`, for runs the analysis was not written against.
    """
    import warnings

    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return experiment.analyze(data, plan), ""
    except _FOREIGN_DATA_ERRORS as err:
        return None, f"{type(err).__name__}: {err}"


def referee_ns2(
    experiment: Experiment,
    plan: Plan,
    netsim: Any,
    results: Sequence[ClaimResult],
    cache: Path,
    say: Progress,
    jobs: int = 1,
) -> tuple[RefereeResult, ...]:
    """ns-2.35's value of each claim of a sweep experiment, beside tfrclab's ``results``.

    ``netsim`` is the experiment's sweep data (one :class:`SweepData`, or a dict by cell label)
    that ``results`` were measured on, ``plan`` the plan they were decided on; ns-2's outputs
    are kept under ``cache``, and up to ``jobs`` ns-2 runs go at once. A cell that ns-2 fails
    on, or that runs past :data:`NS2_TIMEOUT_S`, counts as refused, with that reason. See the
    module documentation.

    Raises:
        NsNotFound: if ``ns`` is not on PATH and some cell exports.
    """
    from tfrclab.ns2.crosscheck import NsNotFound
    from tfrclab.ns2.plan import ExportError, resolve
    from tfrclab.scenario import Scenario

    if experiment.kind != "sweep":
        why = f"a {experiment.kind} experiment (only sweeps are refereed)"
        return tuple(RefereeResult(_nothing(), "not exportable", why) for _ in results)
    cells = experiment.cells or (("", experiment.scenarios[0], {}),)
    refused: dict[str, str] = {}
    ns2: dict[str, Any] = {}
    for label, relative, cell in cells:
        changes = {**cell, **plan.changes}
        scenario = Scenario.load(scenario_path(relative))
        if changes:
            scenario = scenario.with_(**changes)
        try:
            from tfrclab.ns2.export import export_tcl

            export_tcl(resolve(scenario, plan.seeds[0], strict=False))
        except ExportError as err:
            refused[label] = str(err)
            continue
        say(f"{experiment.id}{' ' + label if label else ''}: ns-2.35 on {len(plan.seeds)} seed(s)")
        try:
            ns2[label] = ns2_sweep_data(
                relative,
                changes,
                plan.seeds,
                cache / (label or "run"),
                say,
                jobs=jobs,
                drops=experiment.referee_drops,
                state=experiment.referee_state,
            )
        except NsNotFound:
            raise
        except (ExportError, RuntimeError, ValueError) as err:
            # Another seed's draws ns-2 cannot run, ns-2 failing, or its output cut short: the
            # cell has no ns-2 runs, said as its refusal.
            refused[label] = f"{type(err).__name__}: {err}"
    refusal_text = _grouped(refused, experiment.scenarios[0])
    if not ns2:
        return tuple(RefereeResult(_nothing(), "not exportable", refusal_text) for _ in results)

    def mixed(theirs: Mapping[str, Any], refused_cell: Callable[[str], Any]) -> Any:
        """``theirs`` cells, and the refused ones as ``refused_cell`` makes them by label."""
        if not experiment.cells:
            return theirs[""]
        return {
            label: theirs[label] if label in theirs else refused_cell(label)
            for label, _, _ in cells
        }

    # Donors: for each refused cell, the exported cells of the same scenario file (the same
    # flows and links), whose ns-2 runs stand in for it in the swap probes below.
    scenario_of = {label: relative for label, relative, _ in cells}
    donors = {label: [d for d in ns2 if scenario_of[d] == scenario_of[label]] for label in refused}

    def probe(how: str, j: int) -> Any:
        """The refused cells for one probe: netsim's moved (``how``), or the j-th donor's."""

        def cell(label: str) -> Any:
            if how == "swap":
                return ns2[donors[label][j % len(donors[label])]]
            return _perturbed(netsim[label], how)

        return mixed(ns2, cell)

    # The refused cells as netsim ran them beside ns-2's, then moved far up, far down, to NaN,
    # and swapped for up to three exported cells of the same scenario (ns-2's runs): a claim
    # whose value moves in any probe reads a refused cell (through a minimum or a maximum
    # too). An analysis that cannot run on up or down data counts against every claim; on NaN
    # or a swap it is skipped (analyses need not take NaN counts, cells differ in layout).
    theirs, error = analyze_or_error(experiment, mixed(ns2, lambda label: netsim[label]), plan)
    reads_refused: list[bool] = [False] * len(results)
    if refused and theirs is not None:
        swaps = min(3, min((len(d) for d in donors.values()), default=0))
        probes = [("up", 0), ("down", 0), ("nan", 0), *(("swap", j) for j in range(swaps))]
        for how, j in probes:
            moved, _ = analyze_or_error(experiment, probe(how, j), plan)
            if moved is None and how in ("nan", "swap"):
                continue
            for k, r in enumerate(results):
                reads_refused[k] = reads_refused[k] or (
                    moved is None
                    or not _same(measure_or_nan(r.claim, moved), measure_or_nan(r.claim, theirs))
                )
    out: list[RefereeResult] = []
    for k, r in enumerate(results):
        if reads_refused[k]:
            why = f"reads cells ns-2 cannot run: {refusal_text}"
            out.append(RefereeResult(_nothing(), "not exportable", why))
            continue
        if theirs is None:
            why = (
                f"the experiment's analysis cannot run on ns-2's datasets ({error}); they hold "
                "only what the exported script prints (docs/crosscheck.md)"
            )
            out.append(RefereeResult(_nothing(), "not comparable", why))
            continue
        measured = measure_or_nan(r.claim, theirs)
        if math.isnan(measured.mean):
            note = measured.note or "the measure gave no value"
            out.append(RefereeResult(measured, "not comparable", note))
            continue
        result = agreement(r.measured, measured)
        out.append(replace(result, ns2_verdict=judge(r.claim, measured).verdict))
    return tuple(out)


def _grouped(refused: Mapping[str, str], scenario: str) -> str:
    """The refused cells grouped by their refusal: ``tear, tear-sack: flows[0].kind: ...``."""
    by_reason: dict[str, list[str]] = {}
    for label, why in refused.items():
        by_reason.setdefault(why, []).append(label or scenario)
    return "; ".join(f"{', '.join(labels)}: {why}" for why, labels in by_reason.items())


def _nothing() -> Measurement:
    return Measurement(math.nan, math.nan, 0)
