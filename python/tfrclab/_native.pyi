"""Type stubs for the private extension module built from crates/tfrclab-py."""

import os
from collections.abc import Callable, Sequence
from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AckSample",
    "ConfigError",
    "ControllerError",
    "ControllerState",
    "CostError",
    "MediaReceiver",
    "MediaSender",
    "QueueFull",
    "ScenarioError",
    "Simulation",
    "build",
    "check_scenario",
    "decode_state",
    "equation",
    "estimate",
    "flush_events",
    "on_off_schedules",
    "quantity",
    "queue_buffers",
    "run_channel",
    "run_recv",
    "run_send",
    "set_event_handler",
    "testbed_check",
    "testbed_relay",
    "version",
    "web_variables",
]

class ConfigError(ValueError):
    """A TFRC configuration the library cannot run with, such as an unknown preset name."""

class ScenarioError(ValueError):
    """A scenario netsim refused; ``str(err)`` is one line naming the field at fault.

    ``kind`` is "syntax", "invalid", "missing" or "unknown_key"; ``path`` is the field as
    written in the file (``flows[2].start``; None for a syntax error); ``expected``, ``found``
    and ``suggestion`` are None where they do not apply.
    """

    kind: str | None
    path: str | None
    expected: str | None
    found: str | None
    suggestion: str | None

class CostError(ScenarioError):
    """A scenario refused before it runs: its run would cost more than the budget.

    ``str(err)`` is one line naming the dominant parts and how to lower them; ``kind`` is
    "cost", ``path`` the costliest part (``flows[0]``, ``monitor.bin``) and ``estimate`` the
    estimate as :func:`estimate` returns it. Run anyway with ``force=True``.
    """

    estimate: dict[str, Any] | None

class QueueFull(BufferError):
    """A media sender's payload queue holds its bound: the payload was dropped and counted."""

@final
class MediaSender:
    """A tfrc-udp sender of the application's payloads, its loop on a thread of its own."""

    def __new__(
        cls,
        to: str,
        preset: str = "rfc5348",
        size_bytes: int = 1000,
        bind: str | None = None,
        queue_packets: int = 256,
        oscillation_prevention: bool | None = None,
    ) -> MediaSender: ...
    @property
    def local_addr(self) -> str:
        """The socket's address."""
    @property
    def peer(self) -> str:
        """Where the payloads go."""
    def send(
        self,
        payload: bytes,
        deadline_s: float | None = None,
        priority: int = 0,
        group: int | None = None,
    ) -> int:
        """Queue ``payload``; its ticket. Raises QueueFull, ValueError, OSError, RuntimeError."""
    def flush(self, below: int | None = None) -> int:
        """Remove queued payloads of priority below ``below`` (all when None); how many."""
    @property
    def now_s(self) -> float:
        """Now on the sender's clock, seconds."""
    @property
    def allowed_rate_bps(self) -> float:
        """The allowed sending rate X, bits/s."""
    @property
    def queued(self) -> int:
        """Payloads waiting in the queue."""
    def stats(self) -> dict[str, Any]:
        """The live statistics as of the loop's last pass."""
    def rate_changes(self) -> list[dict[str, Any]]:
        """The rate changes since the last call."""
    def wait_rate_change(self, timeout_s: float | None = None) -> dict[str, Any] | None:
        """Wait for the next rate change (None on timeout)."""
    def expired(self) -> list[dict[str, Any]]:
        """The payloads dropped at their deadline since the last call."""
    @property
    def closed(self) -> bool:
        """Whether the session is closed (or its loop failed)."""
    def close(self) -> dict[str, Any]:
        """Stop the loop; the final report."""

@final
class MediaReceiver:
    """A tfrc-udp receiver handing payloads over, its loop on a thread of its own."""

    def __new__(
        cls, bind: str, preset: str = "rfc5348", max_pending: int = 4096
    ) -> MediaReceiver: ...
    @property
    def local_addr(self) -> str:
        """The socket's address."""
    def recv(
        self, timeout_s: float | None = None
    ) -> tuple[int, bytes, float, float, int, bool, int, float] | None:
        """The next payload's fields, or None on timeout or once closed and drained."""
    def drain(
        self, limit: int = 4096
    ) -> list[tuple[int, bytes, float, float, int, bool, int, float]]:
        """Every payload pending now."""
    def stats(self) -> dict[str, Any]:
        """The live statistics as of the loop's last pass, with ``overflow``."""
    @property
    def closed(self) -> bool:
        """Whether the session is closed (or its loop failed)."""
    def close(self) -> dict[str, Any]:
        """Stop the loop; the final report."""

class ControllerError(RuntimeError):
    """A congestion controller (a scenario's ``controller``) misbehaved during a run.

    It raised, returned something other than None or ``(cwnd, ssthresh[, pacing_rate])``, or
    a window that is not a finite number of at least one packet, or a callback did not return
    within the flow's ``controller_limit`` of wall time. ``str(err)`` names the flow, the
    controller, the callback and the simulated time; the run's results are discarded.
    """

@final
class ControllerState:
    """The TCP sender's state a Python congestion controller sees (docs/controllers.md)."""

    @property
    def now(self) -> float:
        """The simulated time of the event, seconds."""
    @property
    def cwnd(self) -> float:
        """The congestion window, packets."""
    @property
    def ssthresh(self) -> float:
        """The slow-start threshold, packets."""
    @property
    def win(self) -> float:
        """min(cwnd + Reno's recovery inflation, window): what ns-2's reductions start from."""
    @property
    def window(self) -> int:
        """The receiver window (the scenario's ``window``), packets."""
    @property
    def flight(self) -> int:
        """Packets sent and not cumulatively acknowledged."""
    @property
    def highest_ack(self) -> int:
        """The highest cumulative ACK (-1 before any)."""
    @property
    def max_sent(self) -> int:
        """The highest sequence number sent (-1 before any)."""
    @property
    def in_recovery(self) -> bool:
        """In loss recovery."""
    @property
    def first_reduction(self) -> bool:
        """No reduction has happened yet on this connection."""
    @property
    def after_timeout(self) -> bool:
        """The last congestion response was a retransmission timeout."""
    @property
    def app_limited(self) -> bool:
        """Everything the application supplied has been sent."""
    @property
    def srtt(self) -> float:
        """The smoothed RTT in seconds (0 before the first sample)."""
    @property
    def packet_bytes(self) -> int:
        """Payload bytes per packet."""

@final
class AckSample:
    """What an ACK that moved the cumulative ACK tells a Python congestion controller."""

    @property
    def acked(self) -> int:
        """Packets newly acknowledged.

        At ``cong_avoid`` under the ``linux`` preset: newly delivered, SACKed ones included
        (docs/controllers.md).
        """
    @property
    def acked_bytes(self) -> int:
        """Payload bytes newly acknowledged."""
    @property
    def rtt(self) -> float | None:
        """The RTT of the newest packet acknowledged, seconds; None if it was retransmitted."""
    @property
    def ece(self) -> bool:
        """The ACK carried ECN-Echo (the flow's ``ecn`` is on and a router marked a packet)."""

def flush_events(timeout_s: float = 2.0) -> bool:
    """Wait until every event emitted before the call reached the handler; whether it did."""

def set_event_handler(
    handler: Callable[[str, str, str, dict[str, Any]], object] | None, level: str = "debug"
) -> int:
    """Forward tfrc-udp's events to ``handler(level, target, event, fields)``; None stops.

    Returns the events dropped so far because the handler fell behind.
    """

def check_scenario(scenario_toml: str) -> dict[str, Any]:
    """Check a scenario's TOML text as a run would; return its headline values.

    Keys: ``name`` (str), ``duration_ns``, ``bin_ns``, ``seed``, ``measure_from_ns``,
    ``measure_to_ns`` (the ``[measure]`` window), ``flows`` (ints) and ``flow_names`` (list of
    str). Raises ScenarioError naming the field at fault.
    """

def estimate(scenario_toml: str) -> dict[str, Any]:
    """What running a scenario will cost, without running it.

    Keys: ``events_per_s``, ``events``, ``wall_s`` (floats), ``memory_bytes``, ``bins``,
    ``flows`` (ints), ``parts`` (list of dicts with ``path``, ``events_per_s``,
    ``memory_bytes``, ``hint``; costliest first), ``budget`` (dict: ``wall_s``,
    ``memory_bytes``), ``events_per_wall_s`` (float) and ``refusal`` (str or None). Raises
    ScenarioError naming the field at fault.
    """

@final
class Simulation:
    """One netsim run of a scenario, stepped in simulated time (GIL released while stepping)."""

    def __new__(
        cls,
        scenario_toml: str,
        seed: int | None = None,
        force: bool = False,
        pcap_dir: str | os.PathLike[str] | None = None,
        ns2_trace: str | os.PathLike[str] | None = None,
    ) -> Simulation: ...
    @property
    def seed(self) -> int:
        """The seed the run's random streams derive from."""
    @property
    def end_ns(self) -> int:
        """When the run ends, in simulated nanoseconds."""
    @property
    def now_ns(self) -> int:
        """How far the run has got, in simulated nanoseconds."""
    @property
    def events(self) -> int:
        """Events processed so far."""
    def run_until(self, t_ns: int) -> None:
        """Process every event due at or before ``t_ns`` (and before the end).

        Looks for signals every 20 ms of wall time: Ctrl-C raises KeyboardInterrupt promptly.
        """
    def finish(self) -> dict[str, Any]:
        """Close the monitors and return the results as columns.

        Keys: ``scenario`` (str), ``seed``, ``version`` (str), ``duration_ns``, ``bin_ns``,
        ``bins`` (n), ``events``, ``measure_from_ns``, ``measure_to_ns``, ``reference_group``
        (str, "" when the scenario names none); ``flows`` (dict:
        per-flow lists of str ``name``, ``kind``, ``variant``, ``from``, ``to``, ``group`` (""
        for the protocol class), bool ``background``, ``path`` (the
        forward path as a list of link indices per flow), uint64 arrays ``start_ns``,
        ``base_rtt_ns``, ``loss_event_rtt_ns``, the int64 array ``stop_ns`` (-1: no stop) and
        the totals); ``flow_bins`` (dict: per series a list of one array of n per flow, each in the
        narrowest unsigned dtype its values fit, uint8 to uint64);
        ``flow_states`` (one ``(fields, blob)`` per flow: the field names and the sampled
        state compressed, for :func:`decode_state`); ``links`` (dict of per-link columns, with
        a bool ``binned``);
        ``link_bins`` (dict of (binned links x n) arrays); ``packet_trace`` (None or a dict of
        columns); ``traces`` (one dict per traced link and format: ``kind`` ("pcap" or "ns2"),
        ``path``, ``link``, ``written``, ``over_limit``, ``limit``, ``error`` (str or None));
        ``drop_logs`` (dict by flow name, only the flows of ``monitor.drop_log``: the uint64
        array ``send_ns`` of the dropped packets' send times in drop order, ``limit`` and the
        bool ``overflowed``).
        """

def decode_state(blob: bytes, fields: int, bins: int) -> NDArray[np.float64]:
    """Decode a flow's compressed state trace (from ``finish``) to a (fields x bins) array.

    Raises ValueError when ``blob`` is not a trace of ``fields`` fields.
    """

def equation(
    size_bytes: float,
    rtt_s: float,
    p: float,
    b: float = 1.0,
    t_rto_s: float | None = None,
    cap_rto_term: bool = False,
) -> float:
    """The allowed rate X in bytes/s from the TCP throughput equation (RFC 5348 §3.1)."""

def run_channel(
    preset: str,
    forward_delay_s: float,
    reverse_delay_s: float,
    schedule: Sequence[tuple[float, str, float]],
    duration_s: float,
    seed: int = 0,
) -> dict[str, NDArray[np.float64] | int]:
    """Run one TFRC flow over the scripted channel and return its feedback records as columns.

    Schedule entries are ``(start_s, pattern, parameter)`` with pattern "none", "all",
    "periodic" (parameter: drop one packet in every ``parameter``) or "bernoulli" (parameter:
    drop probability). The result has one float64 array per record field (time_s,
    x_bytes_per_s, x_calc_bytes_per_s, x_recv_bytes_per_s, p, rtt_s, last_interval_packets,
    mean_interval_packets, discount_factor, open_interval_packets) and the ints packets_sent,
    packets_delivered and segment_size_bytes. Releases the GIL while simulating.
    """

def run_send(
    to: str,
    duration_s: float,
    preset: str = "rfc5348",
    size_bytes: int = 1000,
    app_rate_bps: float | None = None,
    bind: str | None = None,
    stats_interval_s: float = 1.0,
    on_sample: Callable[[dict[str, Any]], object] | None = None,
    oscillation_prevention: bool | None = None,
) -> dict[str, Any]:
    """Send a TFRC flow over UDP to ``to`` (``host:port``) for ``duration_s`` seconds.

    ``size_bytes`` is the datagram size s (header included); ``app_rate_bps=None`` sends greedily, a
    rate (bits/s) runs a constant-rate application. ``oscillation_prevention`` turns the sqrt(RTT)
    inter-packet spacing (RFC 5348 §4.5) on or off (None: the preset's). The socket binds to
    ``bind`` (default: the wildcard of ``to``'s family, any port). The GIL is released while the
    session runs; every 100 ms Python's signal handlers run, and Ctrl-C ends the session early with
    ``interrupted`` True. Each per-interval sample (a dict: time_s, sent_packets, sent_bytes,
    queue_drops, x_bytes_per_s, x_recv_bytes_per_s, p, rtt_s, feedback_accepted, feedback_rejected,
    input_dropped, nofeedback_expiries) goes to ``on_sample`` as it is taken. Returns ``role``,
    ``local_addr``, ``peer``, ``interrupted``, ``samples`` (the list) and ``report`` (the session's
    totals and its ``input`` ledger). Raises ValueError naming a bad argument, ConfigError for an
    unknown preset, OSError naming the failed step.
    """

def run_recv(
    bind: str,
    duration_s: float,
    preset: str = "rfc5348",
    stats_interval_s: float = 1.0,
    on_sample: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """Receive a TFRC flow over UDP on ``bind`` (``host:port``) for ``duration_s`` seconds.

    As :func:`run_send`; samples hold time_s, received_packets, received_bytes,
    lost_packets, loss_events, p, x_recv_bytes_per_s, rtt_s, feedback_sent and
    input_dropped; ``peer`` is the sender's address (None if none came).
    """

def on_off_schedules(scenario_toml: str, seed: int) -> list[list[tuple[int, int]]]:
    """Each flow's drawn ON periods ``(on_ns, off_ns)`` for ``seed``, without running.

    In flow order (``count`` expanded); empty for a flow without ``on_off``. The last period may
    run past the flow's stop or the end of the run.
    """

def queue_buffers(scenario_toml: str) -> list[tuple[str, str, int, int, float]]:
    """Each link's queue as built, without running.

    ``(name, kind, limit_packets, limit_bytes, data_bytes)``; -1 for the unit the buffer is not
    in, NaN when no flow's data crosses it.
    """

def quantity(text: str) -> tuple[str, float] | None:
    """The quantity ``text`` names as netsim reads it, or None.

    ``("duration", seconds)``, ``("rate", bits/s)`` or ``("size", bytes)``.
    """

def version() -> str:
    """The version of the tfrclab crates this module was built from."""

def build() -> str:
    """How this module was built: ``"profile-guided"``, ``"instrumented"`` or ``"plain"``.

    Profile-guided: by scripts/install.sh with a training profile; instrumented: the build that
    records that profile. Speed depends on it; results do not.
    """

def testbed_check(config: str) -> None:
    """Check a testbed relay configuration (TOML); ``ScenarioError`` names the key at fault."""

def testbed_relay(config: str, ready: Callable[[int], object]) -> dict[str, Any]:
    """Run the testbed relay; return its counters.

    Creates the relay's TUN devices, calls ``ready(start_monotonic_ns)``, and forwards packets
    until standard input is readable or closed (or ``max_duration`` has passed).
    """

def web_variables(
    scenario_toml: str, seed: int
) -> list[list[tuple[str, tuple[str, list[float]]]] | None]:
    """Each web and short-TCP flow's resolved random variables for ``seed``; None for others.

    ``[(name, (kind, parameters))]`` for ``inter_page`` (``load``/``share`` resolved),
    ``objects_per_page``, ``inter_object`` and ``object_size``; for a short-TCP flow
    ``packets`` and ``interarrival`` (``load``/``share`` resolved).
    """
