"""The testbed: two network namespaces joined by the user-space link emulator.

Side ``a`` (address ``10.200.0.1``) and side ``b`` (``10.200.0.2``) each see one point-to-point
TUN interface; the relay (crate ``testbed``, run as ``python -m tfrclab.testbed relay``) holds
both devices and applies, per direction, Bernoulli loss, a DropTail or RED queue (netsim's own
code), a transmitter at the configured rate and a propagation delay. See docs/testbed.md.

Everything a :class:`Testbed` creates is removed when its ``with`` block ends, whether normally,
by an exception, by Ctrl-C or by SIGTERM: the processes it started with their process groups,
any other process left in its namespaces, the relay, the namespaces (and with them the devices
and addresses). While the testbed is up, the first SIGINT or SIGTERM raises ``KeyboardInterrupt``
and more wait until the cleanup is done, however many come and however soon, from its set-up on
(:mod:`tfrclab.testbed.interrupts`).
If the creating process is SIGKILLed, the relay stops by itself (its stop pipe closes) and the
next testbed removes the namespaces left behind (:func:`tfrclab.testbed.netns.remove_stale`).
If the relay stops by itself while the testbed is up (its ``max_duration``, one hour by
default), the testbed says so on stderr at once (:attr:`Testbed.ended`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from tfrclab import _native
from tfrclab._process import kill_group
from tfrclab.testbed import netns
from tfrclab.testbed.config import relay_document
from tfrclab.testbed.interrupts import OneInterrupt, signals_deferred
from tfrclab.testbed.netns import TestbedError

Side = Literal["a", "b"]

#: The addresses of the two sides.
ADDRESSES: dict[str, str] = {"a": "10.200.0.1", "b": "10.200.0.2"}

_counter = itertools.count()
_READY_TIMEOUT_S = 15.0
_STOP_TIMEOUT_S = 10.0


class Testbed:
    """An emulated link between two namespaces, as a context manager.

    Args:
        rate: The link rate in b/s, or a string with a unit (``"10Mb/s"``, ``"100Mbps"``).
        delay: One-way propagation delay in seconds, or a string (``"25ms"``).
        queue: ``"droptail:N"`` (N waiting packets), ``"droptail"`` (ns-2's default),
            ``"red"``, ``"red:ns2_2000"``, ``"red:adaptive"``, or a scenario-file queue table.
        loss: Bernoulli drop probability on arrival, in [0, 1).
        reverse: Overrides for the b-to-a direction (keys ``rate``, ``delay``, ``loss``,
            ``queue``); by default it is the same as a-to-b.
        seed: Seed of the loss and RED random streams.
        log: Path of the per-packet log (read it with :func:`tfrclab.testbed.read_log`);
            None for no log.
        max_log_bytes: The log's size cap.
        max_duration: The relay stops by itself after this long (seconds or a string).
        tick: The relay's clock granularity (seconds or a string, at most 10 ms): deliveries
            due within one tick leave together, up to one tick late, for fewer wake-ups (as
            Dummynet's kernel tick). 0, the default, delivers at each exact deadline.
        slack: How late a delivery may be made to leave in one wake-up with the deliveries due
            after it (seconds or a string, at most 10 ms): the relay wakes at the last deadline
            within ``slack`` of the first one due, so isolated deliveries stay exact and a
            cluster costs one wake-up. 0, the default, wakes at each exact deadline.

    Raises:
        TestbedError: On entry: not root, no /dev/net/tun, or a set-up step failed.
        tfrclab.ScenarioError: On entry: a parameter the relay refuses (the message names it).
        ValueError: A malformed ``queue`` spec or an unknown ``reverse`` key.
    """

    def __init__(
        self,
        rate: str | float = "10Mb/s",
        delay: str | float = "25ms",
        queue: str | Mapping[str, Any] = "droptail:50",
        loss: float = 0.0,
        *,
        reverse: Mapping[str, Any] | None = None,
        seed: int = 1,
        log: str | os.PathLike[str] | None = None,
        max_log_bytes: int = 256 << 20,
        max_duration: str | float = "1h",
        tick: str | float = 0.0,
        slack: str | float = 0.0,
    ) -> None:
        self._forward: dict[str, Any] = {
            "rate": rate,
            "delay": delay,
            "queue": queue,
            "loss": loss,
        }
        self._reverse = dict(reverse) if reverse else None
        self._seed = seed
        self.log_path: Path | None = Path(log) if log is not None else None
        self._max_log_bytes = max_log_bytes
        self._max_duration = max_duration
        self._tick = tick
        self._slack = slack
        self._tag = f"{os.getpid()}-{next(_counter)}"
        self.namespaces: dict[str, str] = {
            side: f"{netns.PREFIX}{self._tag}-{side}" for side in ("a", "b")
        }
        short = self._tag.replace("-", "x")
        self.devices: dict[str, str] = {side: f"tb{short}{side}" for side in ("a", "b")}
        self.report: dict[str, Any] | None = None
        self.relay_start_ns: int | None = None
        self.ended: str | None = None
        """Why the link ended before the testbed was closed (the relay's time limit, or its
        failure), as told on stderr; None while it is up or when it was closed."""
        self._relay: subprocess.Popen[str] | None = None
        self._relay_output = ""
        self._watcher: threading.Thread | None = None
        self._stopping = False
        self._children: list[subprocess.Popen[Any]] = []
        self._workdir: str | None = None
        self._interrupts: OneInterrupt | None = None
        self._entered = False

    # -- life cycle ---------------------------------------------------------------------------

    def __enter__(self) -> Testbed:
        # Parameters first: a bad one is reported as such, with or without privileges.
        document = self._document()
        _native.testbed_check(document)
        netns.require_privileges()
        # From here one interrupt tears the testbed down: a second one cannot cut the set-up's
        # or the cleanup's own handling short (see close).
        self._interrupts = OneInterrupt()
        self._interrupts.install()
        try:
            netns.remove_stale()
            self._entered = True
            self._workdir = tempfile.mkdtemp(prefix="tfrclab-testbed-")
            config = Path(self._workdir) / "relay.toml"
            config.write_text(document, encoding="utf-8")
            for ns in self.namespaces.values():
                netns.claim(ns)
                netns.ip("netns", "add", ns)
            self._start_relay(config)
            # The relay has read its configuration: nothing is left in /tmp even if this
            # process is SIGKILLed later.
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
            for side, ns in self.namespaces.items():
                self._configure_side(side, ns)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Remove everything the testbed created (idempotent; called by ``__exit__``).

        Every step is attempted even if an earlier one failed; the first failure is raised at
        the end as :class:`TestbedError`. SIGINT and SIGTERM arriving meanwhile do not cut it
        short: once everything is removed, ``KeyboardInterrupt`` is raised if one came during
        the cleanup or after an earlier one interrupted the testbed.
        """
        interrupts, self._interrupts = self._interrupts, None
        try:
            if self._entered:
                with signals_deferred():
                    self._entered = False
                    self._remove_everything()
        finally:
            if interrupts is not None:
                interrupts.uninstall()
        if interrupts is not None and interrupts.waiting:
            raise KeyboardInterrupt

    def _remove_everything(self) -> None:
        """The steps of :meth:`close`."""
        errors: list[str] = []
        for child in self._children:
            kill_group(child)
        self._children.clear()
        for ns in self.namespaces.values():
            netns.kill_all_in(ns)
        if self._relay is not None:
            try:
                self._stop_relay()
            except (OSError, ValueError) as err:
                errors.append(f"relay: {err}")
        for ns in self.namespaces.values():
            try:
                netns.delete(ns)
                netns.release(ns)
            except TestbedError as err:
                errors.append(str(err))
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        if errors:
            raise TestbedError("testbed cleanup: " + "; ".join(errors))

    # -- running things -----------------------------------------------------------------------

    def address(self, side: Side) -> str:
        """The IPv4 address of ``side`` (``"a"`` or ``"b"``)."""
        return ADDRESSES[self._check_side(side)]

    def popen(self, side: Side | None, cmd: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``cmd`` inside ``side``'s namespace (``subprocess.Popen`` keywords accepted).

        With ``side`` None it runs in this process's namespace. The process gets a session of
        its own and is killed, with its process group, when the testbed closes.
        """
        if not self._entered:
            raise TestbedError("the testbed is not running (use it in a with block)")
        argv = list(cmd)
        if side is not None:
            argv = ["ip", "netns", "exec", self.namespaces[self._check_side(side)], *argv]
        kwargs.setdefault("start_new_session", True)
        proc: subprocess.Popen[Any] = subprocess.Popen(argv, **kwargs)
        self._children.append(proc)
        return proc

    def run(
        self,
        side: Side,
        cmd: Sequence[str],
        *,
        timeout: float = 60.0,
        check: bool = False,
        capture_output: bool = True,
        text: bool = True,
    ) -> subprocess.CompletedProcess[Any]:
        """Run ``cmd`` inside ``side``'s namespace and wait for it, at most ``timeout`` seconds.

        Raises:
            subprocess.TimeoutExpired: It ran longer (it is killed first).
            subprocess.CalledProcessError: ``check`` and a non-zero exit status.
        """
        pipe = subprocess.PIPE if capture_output else None
        proc = self.popen(side, cmd, stdout=pipe, stderr=pipe, text=text)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            raise
        done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if check:
            done.check_returncode()
        return done

    def tool(self, side: Side, *args: str, timeout: float = 60.0) -> Any:
        """Run a traffic tool (``python -m tfrclab.testbed TOOL ARGS``) in ``side``.

        Returns:
            The tool's JSON result.

        Raises:
            TestbedError: The tool failed; the message holds its error output.
        """
        done = self.run(side, _python_module(*args), timeout=timeout)
        if done.returncode != 0:
            raise TestbedError(f"{args[0]} in {side}: {done.stderr.strip()}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    # -- internals ----------------------------------------------------------------------------

    def _document(self) -> str:
        return relay_document(
            tun_a=self.devices["a"],
            tun_b=self.devices["b"],
            forward=self._forward,
            reverse=self._reverse,
            seed=self._seed,
            max_duration=self._max_duration,
            log=str(self.log_path.resolve()) if self.log_path is not None else None,
            max_log_bytes=self._max_log_bytes,
            tick=self._tick,
            slack=self._slack,
        )

    @staticmethod
    def _check_side(side: str) -> str:
        if side not in ADDRESSES:
            raise ValueError(f"side {side!r}: expected 'a' or 'b'")
        return side

    def _start_relay(self, config: Path) -> None:
        self._relay = subprocess.Popen(
            _python_module("relay", str(config)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert self._relay.stdout is not None
        ready, _, _ = select.select([self._relay.stdout], [], [], _READY_TIMEOUT_S)
        line = self._relay.stdout.readline() if ready else ""
        if not line.startswith("ready "):
            kill_group(self._relay)
            _, err = self._relay.communicate()
            self._relay = None
            detail = (err or "").strip() or f"no ready line within {_READY_TIMEOUT_S:.0f} s"
            raise TestbedError(f"the relay did not start: {detail}")
        self.relay_start_ns = int(line.split()[1])
        self._watcher = threading.Thread(
            target=self._watch_relay, args=(self._relay,), name="testbed-relay", daemon=True
        )
        self._watcher.start()

    def _watch_relay(self, relay: subprocess.Popen[str]) -> None:
        """Keep the relay's report when it stops; say on stderr if it stopped by itself."""
        assert relay.stdout is not None
        self._relay_output = relay.stdout.read()
        relay.wait()
        if self._stopping:
            return
        a, b = self.namespaces["a"], self.namespaces["b"]
        if '"stopped": "max_duration"' in self._relay_output:
            limit = self._max_duration
            limit = f"{limit:g} s" if isinstance(limit, (int, float)) else limit
            why = f"the relay's time limit (max_duration {limit}) ended the link"
        else:
            why = f"the relay stopped by itself (exit status {relay.returncode}): the link is down"
        self.ended = f"testbed: {why} between {a} and {b}"
        print(self.ended, file=sys.stderr, flush=True)

    def _configure_side(self, side: str, ns: str) -> None:
        dev = self.devices[side]
        peer = ADDRESSES["b" if side == "a" else "a"]
        netns.ip("link", "set", dev, "netns", ns)
        netns.ip("-n", ns, "link", "set", "lo", "up")
        # No IPv6 link-local address: no router solicitations or MLD reports in the log.
        netns.ip("-n", ns, "link", "set", dev, "addrgenmode", "none")
        netns.ip("-n", ns, "addr", "add", ADDRESSES[side], "peer", peer, "dev", dev)
        netns.ip("-n", ns, "link", "set", dev, "up")

    def _stop_relay(self) -> None:
        relay, watcher = self._relay, self._watcher
        assert relay is not None
        assert watcher is not None
        self._relay = None
        self._stopping = True
        assert relay.stdin is not None
        with contextlib.suppress(OSError):
            relay.stdin.close()  # the stop pipe
        watcher.join(_STOP_TIMEOUT_S)
        if watcher.is_alive():
            kill_group(relay)
            raise TestbedError(f"the relay did not stop within {_STOP_TIMEOUT_S:.0f} s")
        assert relay.stderr is not None
        err = relay.stderr.read()
        relay.stderr.close()
        if relay.returncode != 0:
            raise TestbedError(f"the relay failed: {err.strip()}")
        self.report = json.loads(self._relay_output.strip().splitlines()[-1])


def _python_module(*args: str) -> list[str]:
    """``python -m tfrclab.testbed ARGS`` with this interpreter."""
    return [sys.executable, "-m", "tfrclab.testbed", *args]
