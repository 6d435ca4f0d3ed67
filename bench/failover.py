"""Acknowledged actions lost in a Redis failover: `python bench/failover.py [--runs N]`.

The service on a primary, a replica and three sentinels; eight clients playing; the primary
SIGKILLed and the replica promoted by the sentinels (tests/support/failover.py). Each run is
done with TEN_REDIS_WAIT_REPLICAS=0 (the default: acknowledged once the primary has it) and
=1 (once a replica has it too), with and without a partition of 0.5 s between the primary and
its replica just before the kill (a replication lag). Prints, per case and run, the actions acknowledged, how many
of them the promoted replica does not have, and what the clients got at the fault. No
assertions: a report (tests/faults/test_failover.py asserts).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.failover import run_failover


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case (default 3)")
    args = parser.parse_args()
    for stall in (False, True):
        for wait_replicas in (0, 1):
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="ten-failover-") as workspace:
                    outcome = run_failover(
                        Path(workspace), wait_replicas=wait_replicas, stall=stall
                    )
                print(outcome.line(), flush=True)


if __name__ == "__main__":
    main()
