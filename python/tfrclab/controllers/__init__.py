"""Congestion controllers written in Python, for netsim's TCP senders (docs/controllers.md).

A controller is a class; netsim makes one instance per TCP sender and calls its methods at the
sender's congestion events, as Linux calls a ``tcp_congestion_ops``:

- ``cong_avoid(state, ack)`` (required): an ACK moved the cumulative ACK forward outside loss
  recovery; grow the window.
- ``ssthresh(state, reduction)`` (required): a congestion signal, ``reduction`` one of
  ``"recovery"`` (duplicate ACKs started loss recovery), ``"go_back_n"`` (Tahoe's fast
  retransmit), ``"timeout"`` (the retransmission timer expired), ``"restart"`` (the sender
  restarts after being idle) or ``"ecn"`` (an ACK carried ECN-Echo, with the flow's ``ecn``:
  nothing is retransmitted, and it comes at most once per window of data).
- ``pkts_acked(state, ack)`` (optional): every ACK that moved the cumulative ACK, before
  ``cong_avoid``; RTT samples arrive here.
- ``set_state(state, new_state)`` (optional): ``"open"`` when loss recovery ends.

Each returns None (keep the window) or ``(cwnd, ssthresh)`` or ``(cwnd, ssthresh,
pacing_rate)``: packets, packets, bytes per second. ``state`` is a
:class:`tfrclab._native.ControllerState` (``now``, ``cwnd``, ``ssthresh``, ``win``, ``window``,
``flight``, ``highest_ack``, ``max_sent``, ``in_recovery``, ``first_reduction``,
``after_timeout``, ``app_limited``, ``srtt``, ``packet_bytes``); ``ack`` an
:class:`tfrclab._native.AckSample` (``acked``, ``acked_bytes``, ``rtt`` in seconds or None,
``ece``: the ACK carried ECN-Echo, for DCTCP-style controllers).

A scenario names a controller as ``controller = "module:Class"`` on a ``kind = "tcp"`` flow;
this module finds it (:func:`load_class`). A native plugin, ``controller = "native:PATH"``, is
loaded by netsim itself (docs/controllers.md, "Native plugins"). Through the API, a flow's
``controller`` may be the class itself (:meth:`tfrclab.Scenario.from_dict` calls
:func:`register`).

>>> load_class("tfrclab.controllers.gaimd:Gaimd").__name__
'Gaimd'
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

__all__ = ["add_search_dir", "load_class", "register"]

_registered: dict[str, type] = {}


def register(cls: type) -> str:
    """Make ``cls`` findable by :func:`load_class` in this process; returns its name.

    The name is ``"module:QualifiedName"``. A class defined in an importable module is also
    found by sweep workers (each imports it); one defined in ``__main__`` or a notebook only
    in this process.

    Raises:
        TypeError: if ``cls`` is not a class.
    """
    if not isinstance(cls, type):
        raise TypeError(f"a controller must be a class, got {type(cls).__name__}")
    name = f"{cls.__module__}:{cls.__qualname__}"
    _registered[name] = cls
    return name


#: The environment variable netsim reads for the directories where a relative native plugin
#: path (``controller = "native:libx.so"``) is looked for before the current directory.
PLUGIN_PATH_VAR = "TFRCLAB_PLUGIN_PATH"


def add_search_dir(directory: str | Path) -> None:
    """Let :func:`load_class` and netsim's plugin loader find controllers in ``directory``.

    ``directory`` is a scenario file's own directory: it is appended to ``sys.path`` (for
    Python controller modules) and to the ``TFRCLAB_PLUGIN_PATH`` environment variable (for
    relative native plugin paths), both of which spawned sweep workers inherit.
    """
    text = str(Path(directory).resolve())
    if text not in sys.path:
        sys.path.append(text)
    dirs = os.environ.get(PLUGIN_PATH_VAR, "")
    if text not in dirs.split(os.pathsep):
        os.environ[PLUGIN_PATH_VAR] = os.pathsep.join(d for d in (dirs, text) if d)


def load_class(name: str) -> type:
    """The controller class ``name`` (``"module:Class"``) names.

    Raises:
        ValueError: naming what is wrong, phrased as what was expected (netsim shows it as
            the scenario's ``controller`` error).
    """
    if name in _registered:
        return _registered[name]
    module_name, colon, attribute = name.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(
            '"reno", "cubic", "native:PATH" (a plugin library) or "module:Class" (a Python '
            "class on sys.path or in the scenario's directory)"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ValueError(
            f"a module {module_name!r} on sys.path or in the scenario's directory ({err})"
        ) from None
    except Exception as err:  # the user's module failed while importing
        raise ValueError(
            f"a module {module_name!r} that imports (it raised {type(err).__name__}: {err})"
        ) from None
    found: object = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ValueError(
                f"a class {attribute!r} in module {module_name!r} "
                f"({getattr(module, '__file__', '?')})"
            ) from None
    if not isinstance(found, type):
        raise ValueError(f"{name} to be a class, not a {type(found).__name__}")
    missing = [m for m in ("cong_avoid", "ssthresh") if not callable(getattr(found, m, None))]
    if missing:
        raise ValueError(
            f"a controller class with cong_avoid() and ssthresh(); {name} has no "
            + " and no ".join(f"{m}()" for m in missing)
        )
    return found
