"""``python -m tfrclab.testbed``: the relay, the traffic tools and the benchmark.

The relay process and the traffic tools are what a :class:`tfrclab.testbed.Testbed` runs inside
its namespaces:

- ``relay CONFIG``: run the relay (see :mod:`tfrclab.testbed.relay`);
- ``tcp-recv``, ``tcp-send``, ``udp-recv``, ``udp-send``, ``ping``: see
  :mod:`tfrclab.testbed.traffic`;
- ``bench``: :mod:`tfrclab.testbed.bench`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the relay, a traffic tool or the benchmark; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m tfrclab.testbed")
    tools = parser.add_subparsers(dest="tool", required=True)
    relay = tools.add_parser("relay")
    relay.add_argument("config")
    recv = tools.add_parser("tcp-recv")
    recv.add_argument("--port", type=int, default=5001)
    recv.add_argument("--limit", type=float, default=60.0)
    send = tools.add_parser("tcp-send")
    send.add_argument("host")
    send.add_argument("--port", type=int, default=5001)
    send.add_argument("--seconds", type=float, default=5.0)
    send.add_argument("--cc", default="reno")
    send.add_argument("--info-every", type=float, default=0.0, help="TCP_INFO sampling, s")
    send.add_argument("--info-out", default=None, help="JSON lines of TCP_INFO samples")
    usend = tools.add_parser("udp-send")
    usend.add_argument("host")
    usend.add_argument("--port", type=int, default=5002)
    usend.add_argument("--count", type=int, default=1000)
    usend.add_argument("--size", type=int, default=100)
    usend.add_argument("--rate", type=float, default=1e6, help="IP-level rate, bit/s")
    urecv = tools.add_parser("udp-recv")
    urecv.add_argument("--port", type=int, default=5002)
    urecv.add_argument("--idle", type=float, default=1.0)
    urecv.add_argument("--limit", type=float, default=60.0)
    ping = tools.add_parser("ping")
    ping.add_argument("host")
    ping.add_argument("--count", type=int, default=10)
    ping.add_argument("--interval", type=float, default=0.05)
    ping.add_argument("--timeout", type=float, default=2.0)
    bench = tools.add_parser("bench")
    bench.add_argument("--rates", default="10,50,100", help="Mb/s, comma-separated")
    bench.add_argument("--seconds", type=float, default=5.0)
    bench.add_argument("--tick", type=float, default=0.0, help="relay tick, seconds")
    bench.add_argument("--slack", type=float, default=0.0, help="relay slack, seconds")
    args = parser.parse_args(argv)

    if args.tool == "relay":
        from tfrclab.testbed.relay import main as relay_main

        status: int = relay_main(args.config)
        return status
    if args.tool == "bench":
        from tfrclab.testbed.bench import main as bench_main

        rates = [float(r) for r in args.rates.split(",")]
        return bench_main(rates, args.seconds, args.tick, args.slack)

    from tfrclab.testbed import traffic

    result: object
    if args.tool == "tcp-recv":
        result = traffic.tcp_recv(args.port, args.limit)
    elif args.tool == "tcp-send":
        result = traffic.tcp_send(
            args.host, args.port, args.seconds, args.cc, args.info_every, args.info_out
        )
    elif args.tool == "udp-send":
        result = traffic.udp_send(args.host, args.port, args.count, args.size, args.rate)
    elif args.tool == "udp-recv":
        result = traffic.udp_recv(args.port, args.idle, args.limit)
    else:
        result = traffic.ping(args.host, args.count, args.interval, args.timeout)
    traffic.print_json(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
