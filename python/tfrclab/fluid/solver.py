"""The fixed-step integrator of the fluid model: delay differential equations with histories.

Units inside are packets and seconds. Step n covers ``[n*h, (n+1)*h)``; every delayed term is
read from a ring buffer of past steps (rates, queue, drops), so the propagation and queueing
delays are kept, not ignored. The equations (Garcia Berumen & Marot §2, after Bonald 1998 and
Barbera et al. 2005; the choices they leave open are listed in docs/fluid.md):

- buffer (eqs. 11-12): arrivals ``A(t) = sum_k lambda_k(t - tau_k/2)``; the queue integrates
  ``A - C`` within ``[0, B]``; what would overflow B is lost, which at ``q = B`` is the loss
  fraction ``max(0, A - C)/A`` of eq. 11;
- output (eq. 13): the queue serves C (or A when empty); FIFO shares the output among the
  flows in proportion to their admitted rates one queueing delay ``q/C`` earlier;
- feedback: a sender sees its departures and losses ``tau_k/2`` after they leave the buffer,
  with round-trip time ``R_k(t) = tau_k + q(t - tau_k/2)/C`` (eq. 5);
- Reno (eq. 6): ``dW/dt = 1/R`` in congestion avoidance; in slow start ``dW/dt`` is the
  acknowledgement rate (the window doubles per RTT); a loss seen cuts ``W -> gamma*W`` at most
  once per RTT (eq. 8); the rate is ``W/R`` (eq. 3);
- Vegas (eq. 7): ``diff = W (R - R_min)/R``; ``dW/dt = +1/R`` below alpha, ``-1/R`` above
  beta; slow start doubles every other RTT until ``diff > gamma``; losses as Reno;
- TFRC (eqs. 2, 9, 10): one report per smoothed RTT gives the receive rate and the loss event
  rate p (RFC 5348 §5.4's Average Loss Interval over the last eight intervals); the target rate
  follows eq. 9 and the sending rate is the target times ``sqrt_mean(R)/sqrt(R)`` (eq. 10).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tfrclab.equation import throughput_packets_per_s
from tfrclab.fluid.model import FluidModel

__all__ = ["FLOW_FIELDS", "FluidRun", "solve"]

FLOW_FIELDS = ("window", "rate_pps", "rtt_s", "p", "queue_packets")
"""The state each flow reports at the end of every bin: TCP window (packets; NaN for TFRC),
sending rate (packets/s), the round-trip time the sender last saw, TFRC's loss event rate, and
the flow's mean share of the queue over the bin (packets; Berumen Figs. 4, 6, 8, 11)."""

_T_MBI_S = 64.0
"""t_mbi, the longest inter-packet interval TFRC backs off to (Berumen eq. 9; RFC 5348 §4.3)."""

_ALI_WEIGHTS = (1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2)
"""The Average Loss Interval weights over the last eight intervals (RFC 5348 §5.4)."""

_EWMA = 0.9
"""The RTT and sqrt-RTT filter constant (RFC 5348 §4.3, §4.5)."""


@dataclass(frozen=True)
class FluidRun:
    """What one fluid run recorded, per bin (float packets; see :mod:`tfrclab.fluid.result`)."""

    model: FluidModel
    sent: NDArray[np.float64]
    """(flows x bins) packets sent."""
    delivered: NDArray[np.float64]
    """(flows x bins) packets that left the buffer."""
    dropped: NDArray[np.float64]
    """(flows x bins) packets lost at the buffer."""
    loss_events: NDArray[np.int64]
    """(flows x bins) losses the senders reacted to (window cuts, TFRC loss events)."""
    states: NDArray[np.float64]
    """(flows x fields x bins) :data:`FLOW_FIELDS` at the end of each bin."""
    queue_mean: NDArray[np.float64]
    """(bins) time-averaged queue, packets."""
    queue_max: NDArray[np.float64]
    arrivals: NDArray[np.float64]
    """(bins) packets offered to the buffer."""
    connections: NDArray[np.int64]
    """(flows) connections each flow started (restarts included)."""
    wall_seconds: float


def _ali_p(closed: list[float], open_interval: float) -> float:
    """The loss event rate 1/I_mean (RFC 5348 §5.4).

    ``closed`` are the closed intervals, newest first; the mean is the larger of the means with
    and without the open interval.
    """
    n = len(closed)
    if n == 0:
        return 0.0
    w_tot = sum(_ALI_WEIGHTS[:n])
    i_tot1 = sum(closed[i] * _ALI_WEIGHTS[i] for i in range(n))
    i_tot0 = open_interval * _ALI_WEIGHTS[0] + sum(
        closed[i] * _ALI_WEIGHTS[i + 1] for i in range(n - 1)
    )
    mean = max(i_tot0, i_tot1) / w_tot
    return min(1.0, 1.0 / mean) if mean > 0 else 1.0


def _initial_interval(x_recv: float, rtt: float, size: int) -> float:
    """The first loss interval (RFC 5348 §6.3.1).

    It is 1/p for the p at which the equation gives the receive rate, by bisection on log p.
    """
    if x_recv <= 0:
        return 1.0
    lo, hi = math.log(1e-10), 0.0
    if throughput_packets_per_s(size, rtt, 1.0) >= x_recv:
        return 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if throughput_packets_per_s(size, rtt, math.exp(mid)) > x_recv:
            lo = mid
        else:
            hi = mid
    return 1.0 / math.exp(hi)


class _Flow:
    """One flow's sender state (reset at every restart)."""

    def __init__(self, kind: str, tau: float, max_window: float | None) -> None:
        self.kind = kind
        self.tau = tau
        self.max_window = math.inf if max_window is None else max_window
        self.active = False
        self.epoch = 0
        self.reset(0, 0.0)

    def reset(self, step: int, t: float) -> None:
        """A new connection at step ``step``: slow start, empty loss history."""
        self.epoch = step
        self.window = 2.0 if self.kind == "vegas" else 1.0
        self.slow_start = True
        self.ssthresh = math.inf
        self.last_cut = -math.inf
        self.rtt = self.tau
        self.rtt_min = math.inf
        # TFRC
        self.x = 1.0  # RFC 3448 §4.2: one packet per second until the first report
        self.rate = 1.0 if self.kind == "tfrc" else self.window / self.tau
        self.r_est = 0.0
        self.sq_mean = 0.0
        self.closed: list[float] = []
        self.open_interval = 0.0
        self.last_loss = -math.inf
        self.last_report = t
        self.next_report = t + self.tau
        self.received = 0.0
        self.x_recv = 0.0
        self.p = 0.0


def solve(model: FluidModel) -> FluidRun:
    """Integrate ``model`` over its duration with its fixed step; deterministic for its seed."""
    started = time.perf_counter()
    h = model.step_s
    c = model.capacity_pps
    b = float(model.buffer_packets)
    size = model.packet_bytes
    gamma = model.gamma
    nflows = len(model.flows)
    fwd = [max(1, round(f.rtt_s / 2 / h)) for f in model.flows]
    back = [max(1, round(f.rtt_s / 2 / h)) for f in model.flows]
    queue_steps_max = math.ceil(b / c / h) + 2
    hist = max(fwd[k] + back[k] for k in range(nflows)) + queue_steps_max + 2
    lam = [[0.0] * hist for _ in range(nflows)]
    adm = [[0.0] * hist for _ in range(nflows)]
    out = [[0.0] * hist for _ in range(nflows)]
    drop = [[0.0] * hist for _ in range(nflows)]
    qh = [0.0] * hist

    # Connection schedule: start, end of each connection (exponential durations, seeded).
    rngs = [np.random.default_rng([model.seed, k]) for k in range(nflows)]
    flows = [_Flow(f.kind, f.rtt_s, f.max_window) for f in model.flows]
    next_on = [f.start_s for f in model.flows]
    next_off = [math.inf] * nflows
    stop = [math.inf if f.stop_s is None else f.stop_s for f in model.flows]
    connections = np.zeros(nflows, dtype=np.int64)
    limit = [f.increase_limit for f in model.flows]

    spb = model.steps_per_bin
    bins = model.bins
    sent = np.zeros((nflows, bins))
    delivered = np.zeros((nflows, bins))
    dropped = np.zeros((nflows, bins))
    events = np.zeros((nflows, bins), dtype=np.int64)
    states = np.full((nflows, len(FLOW_FIELDS), bins), np.nan)
    queue_mean = np.zeros(bins)
    queue_max = np.zeros(bins)
    arrivals = np.zeros(bins)
    bin_sent = [0.0] * nflows
    bin_deliv = [0.0] * nflows
    bin_drop = [0.0] * nflows
    bin_events = [0] * nflows
    bin_own = [0.0] * nflows
    # Each flow's running total of admitted fluid: what it holds in the FIFO buffer is what
    # it had admitted over the last q/C seconds (exact for FIFO, and no drift over time).
    cum = [[0.0] * hist for _ in range(nflows)]
    total_admitted = [0.0] * nflows
    bin_q = 0.0
    bin_qmax = 0.0
    bin_arr = 0.0

    q = 0.0
    a = [0.0] * nflows
    total_steps = bins * spb
    for n in range(total_steps):
        t = n * h
        slot = n % hist
        # -- connections start and end ------------------------------------------------------
        for k in range(nflows):
            spec = model.flows[k]
            f = flows[k]
            if f.active and (t >= next_off[k] or t >= stop[k]):
                f.active = False
                f.rate = 0.0
                if t < stop[k] and spec.restart_mean_s is not None:
                    idle = rngs[k].exponential(spec.off_mean_s) if spec.off_mean_s > 0 else 0.0
                    next_on[k] = t + idle
                else:
                    next_on[k] = math.inf
            if not f.active and t >= next_on[k] and t < stop[k]:
                f.active = True
                f.reset(n, t)
                connections[k] += 1
                next_on[k] = math.inf
                if spec.restart_mean_s is not None:
                    next_off[k] = t + rngs[k].exponential(spec.restart_mean_s)
        # -- the buffer (eqs. 11-13) ---------------------------------------------------------
        total = 0.0
        for k in range(nflows):
            ak = lam[k][(n - fwd[k]) % hist] if n >= fwd[k] else 0.0
            a[k] = ak
            total += ak
        served = c if q > 0.0 else min(c, total)
        level = q + (total - served) * h
        if level > b:
            p_loss = (level - b) / (total * h)
            q_new = b
        else:
            p_loss = 0.0
            q_new = level if level > 0.0 else 0.0
        departed = (q - q_new) / h + total * (1.0 - p_loss)
        for k in range(nflows):
            adm[k][slot] = a[k] * (1.0 - p_loss)
            drop[k][slot] = a[k] * p_loss
        back_slot = (n - min(int(q / c / h), hist - 1)) % hist if q > 0.0 else slot
        share_total = 0.0
        for k in range(nflows):
            share_total += adm[k][back_slot]
        if share_total <= 0.0:
            back_slot, share_total = slot, total * (1.0 - p_loss)
        for k in range(nflows):
            ok = departed * adm[k][back_slot] / share_total if share_total > 0.0 else 0.0
            out[k][slot] = ok
            total_admitted[k] += adm[k][slot] * h
            cum[k][slot] = total_admitted[k]
            bin_deliv[k] += ok * h
            bin_drop[k] += drop[k][slot] * h
        if q_new > 0.0:
            span = min(int(q_new / c / h), hist - 1)
            for k in range(nflows):
                bin_own[k] += (cum[k][slot] - cum[k][(n - span) % hist]) * h
        qh[slot] = q
        bin_q += q * h
        if q_new > bin_qmax:
            bin_qmax = q_new
        bin_arr += total * h
        q = q_new
        # -- the senders ---------------------------------------------------------------------
        for k in range(nflows):
            f = flows[k]
            if not f.active:
                lam[k][slot] = 0.0
                continue
            j = n - back[k]
            seen = j >= f.epoch + fwd[k]
            ack = 0.0
            loss = False
            if seen:
                q_seen = qh[j % hist]
                f.rtt = f.tau + q_seen / c
                ack = out[k][j % hist]
                jj = j - int(q_seen / c / h)
                loss = jj >= f.epoch + fwd[k] and drop[k][jj % hist] > 0.0
            rtt = f.rtt
            if f.kind == "tfrc":
                got = ack * h
                f.received += got
                f.open_interval += got
                if loss and t - f.last_loss >= (f.r_est or rtt):
                    if not f.closed:
                        x_recv = f.received / max(t - f.last_report, h)
                        f.closed.insert(0, _initial_interval(max(f.x_recv, x_recv), rtt, size))
                    else:
                        f.closed.insert(0, f.open_interval)
                        del f.closed[8:]
                    f.open_interval = 0.0
                    f.last_loss = t
                    bin_events[k] += 1
                if t >= f.next_report and seen:
                    f.x_recv = f.received / max(t - f.last_report, h)
                    f.received = 0.0
                    f.last_report = t
                    first = f.r_est == 0.0
                    f.r_est = rtt if first else _EWMA * f.r_est + (1 - _EWMA) * rtt
                    root = math.sqrt(rtt)
                    f.sq_mean = root if first else _EWMA * f.sq_mean + (1 - _EWMA) * root
                    f.p = _ali_p(f.closed, f.open_interval)
                    r = f.r_est
                    if f.p > 0.0:
                        eq = throughput_packets_per_s(size, r, f.p)
                        allowed = max(min(eq, 2.0 * f.x_recv), 1.0 / _T_MBI_S)
                        f.x = min(f.x + 1.0 / r, allowed) if limit[k] else allowed
                    else:
                        f.x = max(min(2.0 * f.x, 2.0 * f.x_recv), 1.0 / r)
                    f.rate = f.x * f.sq_mean / root
                    f.next_report = t + r
                lam[k][slot] = f.rate
                bin_sent[k] += f.rate * h
                continue
            # TCP Reno / Vegas
            if loss and t - f.last_cut >= rtt:
                f.window = max(gamma * f.window, 1.0)
                f.ssthresh = f.window
                f.slow_start = False
                f.last_cut = t
                bin_events[k] += 1
            elif seen:
                if f.kind == "reno":
                    if f.slow_start and f.window < f.ssthresh:
                        f.window += ack * h
                    else:
                        f.slow_start = False
                        f.window += h / rtt
                else:
                    f.rtt_min = min(f.rtt_min, rtt)
                    diff = f.window * (rtt - f.rtt_min) / rtt
                    if f.slow_start:
                        if diff > model.flows[k].gamma:
                            f.slow_start = False
                        else:
                            f.window += 0.5 * ack * h
                    if not f.slow_start:
                        spec = model.flows[k]
                        if diff < spec.alpha:
                            f.window += h / rtt
                        elif diff > spec.beta:
                            f.window = max(f.window - h / rtt, 1.0)
            if f.window > f.max_window:
                f.window = f.max_window
            f.rate = f.window / rtt
            lam[k][slot] = f.rate
            bin_sent[k] += f.rate * h
        # -- bin boundaries ------------------------------------------------------------------
        if (n + 1) % spb == 0:
            i = n // spb
            for k in range(nflows):
                f = flows[k]
                sent[k, i] = bin_sent[k]
                delivered[k, i] = bin_deliv[k]
                dropped[k, i] = bin_drop[k]
                events[k, i] = bin_events[k]
                bin_sent[k] = bin_deliv[k] = bin_drop[k] = 0.0
                bin_events[k] = 0
                window = f.window if f.kind != "tfrc" else math.nan
                rate = f.rate if f.active else 0.0
                states[k, :, i] = (window, rate, f.rtt, f.p, bin_own[k] / model.bin_s)
                bin_own[k] = 0.0
            queue_mean[i] = bin_q / model.bin_s
            queue_max[i] = bin_qmax
            arrivals[i] = bin_arr
            bin_q = bin_arr = 0.0
            bin_qmax = q
    return FluidRun(
        model=model,
        sent=sent,
        delivered=delivered,
        dropped=dropped,
        loss_events=events,
        states=states,
        queue_mean=queue_mean,
        queue_max=queue_max,
        arrivals=arrivals,
        connections=connections,
        wall_seconds=time.perf_counter() - started,
    )
