"""The runs behind share-gap.md: the Figs. 15-17 analogue with Linux TCP features off.

Reno through DropTail, one feature switched off at a time, and repeated seeds. Needs root.

    PYTHONPATH=python python docs/testbed-results/share-gap/investigate.py OUT VARIANT...

Each variant writes OUT/VARIANT/result.json (tfrclab.testbed.experiments.mixed_run); the
names are the keys of VARIANTS, with an optional ``@SEED`` suffix (default seed 1).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tfrclab.testbed import experiments as tbx

#: Variant name -> (TCP congestion control, sysctls set in both namespaces).
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "tfrc-1500": ("reno", {}),  # TFRC with 1472-byte datagrams: TCP's 1500-byte packets
    "reno": ("reno", {}),
    "cubic": ("cubic", {}),
    "no-sack": ("reno", {"net.ipv4.tcp_sack": "0"}),
    "no-timestamps": ("reno", {"net.ipv4.tcp_timestamps": "0"}),
    "no-autocorking": ("reno", {"net.ipv4.tcp_autocorking": "0"}),
    "no-metrics-save": ("reno", {"net.ipv4.tcp_no_metrics_save": "1"}),
    "no-recovery-extras": (
        "reno",
        {"net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0", "net.ipv4.tcp_frto": "0"},
    ),
    "ns2-like": (
        "reno",
        {
            "net.ipv4.tcp_sack": "0",
            "net.ipv4.tcp_timestamps": "0",
            "net.ipv4.tcp_autocorking": "0",
            "net.ipv4.tcp_no_metrics_save": "1",
            "net.ipv4.tcp_recovery": "0",
            "net.ipv4.tcp_early_retrans": "0",
            "net.ipv4.tcp_frto": "0",
            "net.ipv4.tcp_slow_start_after_idle": "0",
        },
    ),
}


def main(out: str, names: list[str]) -> int:
    """Run each named variant in turn and print one JSON line per run."""
    for spec in names:
        name, _, seed = spec.partition("@")
        cc, sysctls = VARIANTS[name]
        result = tbx.mixed_run(
            Path(out) / spec,
            cc,
            "droptail",
            seconds=60.0,
            seed=int(seed or 1),
            sysctls=sysctls,
            tfrc_size=1472 if name == "tfrc-1500" else None,
        )
        keep = ("tfrc_over_tcp_mean", "total_share", "tcp_srtt_ms_midway", "tfrc_rtt_ms_median")
        print(json.dumps({"variant": spec, **{k: result[k] for k in keep}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
