"""A Redis failover under load (primary + replica + three sentinels, the primary SIGKILLed,
the replica promoted; tests/support/failover.py): with TEN_REDIS_WAIT_REPLICAS=1 no action
the service acknowledged is missing afterwards, even when the replica was cut off from its
primary for the last half second; without it, that half second's acknowledged actions are
lost (what the option is for, and proof that the count sees a loss). `bench/failover.py`
prints the counts of every case (a plain kill, without the partition, too)."""

from __future__ import annotations

from tests.support.failover import run_failover


def test_acknowledged_once_a_replica_has_it_survives_a_failover(tmp_path):
    outcome = run_failover(tmp_path, wait_replicas=1, stall=True)
    print(outcome.line())
    assert outcome.acknowledged >= 300
    assert outcome.lost == 0, outcome.line()
    assert outcome.games_lost == 0, outcome.line()
    # at the fault the clients got 503 (Retry-After) or no answer, never another error
    assert set(outcome.refused) <= {503}, outcome.line()
    assert outcome.after > 0, outcome.line()  # and the service plays on after the failover
    assert outcome.errors == [], outcome.line()


def test_acknowledged_by_the_primary_alone_is_lost_in_a_failover(tmp_path):
    outcome = run_failover(tmp_path, wait_replicas=0, stall=True)
    print(outcome.line())
    assert outcome.lost > 0, outcome.line()
    assert set(outcome.refused) <= {503}, outcome.line()
    assert outcome.after > 0, outcome.line()
    assert outcome.errors == [], outcome.line()
