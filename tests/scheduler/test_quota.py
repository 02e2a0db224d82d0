"""Quotas with borrowing in the one decision (`policy.decide(..., ledger=...)`), pure: a project's share
is guaranteed, idle capacity is borrowed, and the owner takes it back by preempting borrowers."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myapp.scheduler.model import Job, Node, Running, Waiting
from myapp.scheduler.policy import POLICIES, decide
from myapp.scheduler.quota import Ledger, Share

NODES = [Node("n0", 4, cpu=8.0, memory=2.0**34), Node("n1", 4, cpu=8.0, memory=2.0**34)]
CAPACITY = (8, 16.0, 2.0**35)


def job(id, project, gpus, submitted=0.0, cpu=0.0, **kw):
    return Job(id, "g", gpus, submitted, cpu=cpu, project=project, **kw)


def running(j, node, started=0.0, preemptions=0):
    return Running(j, {node: j.gpus}, started, preemptions=preemptions)


def ledger(shares, runs=()):
    return Ledger(CAPACITY, {s.project: s for s in shares}, runs)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_project_at_its_quota_waits_saying_so_while_others_start(policy):
    runs = [running(job("a1", "a", 4), "n0")]
    shares = [Share("a", gpus=4, can_borrow=False), Share("b", gpus=4)]
    waiting = [Waiting(job("a2", "a", 2, 1.0)), Waiting(job("b1", "b", 2, 2.0))]
    d = decide(policy, 10.0, NODES, runs, waiting, ledger=ledger(shares, runs))
    assert [s.job_id for s in d.starts] == ["b1"]
    assert [(r.job_id, r.position, r.text) for r in d.reasons] == [
        ("a2", 1, "waiting: project quota gpu 4/4 (this project does not borrow)")]
    assert d.preempt == []


def test_idle_share_is_borrowed_and_the_owner_takes_it_back_by_preemption():
    shares = [Share("a", gpus=4), Share("b", gpus=4)]
    # b uses all 8 GPUs: 4 of them borrowed from a, who is idle.
    waiting = [Waiting(job("b1", "b", 4, 1.0)), Waiting(job("b2", "b", 4, 2.0))]
    d = decide("gang-fifo", 10.0, NODES, [], waiting, ledger=ledger(shares))
    assert sorted(s.job_id for s in d.starts) == ["b1", "b2"]
    runs = [running(job("b1", "b", 4, 1.0), "n0", started=10.0), running(job("b2", "b", 4, 2.0), "n1", started=11.0)]
    book = ledger(shares, runs)
    assert book.borrowed("b") == (4, 0.0, 0.0) and book.borrowing("b") and not book.borrowing("a")
    # The owner comes back: the most recently started borrower is preempted, and only one.
    d = decide("gang-fifo", 20.0, NODES, runs, [Waiting(job("a1", "a", 2, 15.0))], ledger=book)
    assert d.preempt == ["b2"]
    assert [(s.job_id, s.placement) for s in d.starts] == [("a1", {"n1": 2})]


def test_reclaim_takes_only_from_borrowers_and_never_past_the_owner_share():
    shares = [Share("a", gpus=4), Share("b", gpus=4)]
    runs = [running(job("a1", "a", 4), "n0"), running(job("b1", "b", 4), "n1")]  # nobody borrows
    d = decide("gang-fifo", 5.0, NODES, runs, [Waiting(job("a2", "a", 1, 1.0))], ledger=ledger(shares, runs))
    assert d.preempt == [] and d.starts == []
    assert d.reasons[0].text == "waiting: project quota gpu 4/4, nothing idle to borrow"
    # a within its share, but the nodes are full of non-borrowers: it waits for the nodes, preempts nothing.
    shares = [Share("a", gpus=6), Share("b", gpus=2)]
    runs = [running(job("b1", "b", 2), "n0"), running(job("c1", "c", 4), "n1")]  # c has no share: borrows
    book = ledger(shares, runs)
    d = decide("gang-fifo", 5.0, NODES, runs, [Waiting(job("a1", "a", 4, 1.0))], ledger=book)
    assert d.preempt == ["c1"] and [s.job_id for s in d.starts] == ["a1"]


def test_the_preemption_bound_and_checkpointing_choose_the_victims():
    shares = [Share("a", gpus=4), Share("b", gpus=4)]
    runs = [running(job("b1", "b", 4), "n0", started=1.0),
            running(job("b2", "b", 4, checkpoints=True), "n1", started=0.0)]
    d = decide("gang-fifo", 5.0, NODES, runs, [Waiting(job("a1", "a", 4, 1.0))], ledger=ledger(shares, runs))
    assert d.preempt == ["b2"]  # it checkpoints: it loses nothing, though it started first
    runs = [running(job("b1", "b", 4), "n0", preemptions=1), running(job("b2", "b", 4), "n1", preemptions=1)]
    d = decide("gang-fifo", 5.0, NODES, runs, [Waiting(job("a1", "a", 4, 1.0))], ledger=ledger(shares, runs),
               max_preemptions=1)
    assert d.preempt == [] and d.starts == []
    assert d.reasons[0].text == "waiting: no node with 4 free GPUs"


def test_a_project_that_does_not_lend_keeps_its_idle_share():
    shares = [Share("a", gpus=4, can_lend=False), Share("b", gpus=4)]
    waiting = [Waiting(job("b1", "b", 4, 1.0)), Waiting(job("b2", "b", 2, 2.0))]
    d = decide("gang-fifo", 5.0, NODES, [], waiting, ledger=ledger(shares))
    assert [s.job_id for s in d.starts] == ["b1"]
    assert d.reasons[0].text == "waiting: project quota gpu 4/4, nothing idle to borrow"


def test_gangs_and_cpu_quotas_count_whole_jobs():
    """A 2-replica job asks for both replicas' CPU at once: with room for one replica only, it waits and
    holds nothing; quotas in CPU cores say so in cores."""
    nodes = [Node("local", 0, cpu=3.0, memory=2.0**32)]
    shares = {"a": Share("a", cpu=2.0, memory=2.0**32, can_borrow=False)}
    book = Ledger((0, 3.0, 2.0**32), shares)
    runs = [Running(job("small", "b", 0, cpu=1.0), {"local": 0}, 0.0)]
    book.take(runs[0].job)
    gang = Waiting(job("gang", "c", 0, 1.0, cpu=2.5, memory=2.0**32))  # two replicas of 1.25 CPUs
    d = decide("sieve", 5.0, nodes, runs, [gang])
    assert d.starts == [] and d.reasons[0].text == "waiting: no node with 2.5 free CPUs and 4Gi of free memory"
    d = decide("sieve", 5.0, nodes, runs, [Waiting(job("big", "a", 0, 1.0, cpu=3.0))], ledger=book)
    assert d.reasons[0].text == "waiting: project quota cpu 0/2 (this project does not borrow)"
    d = decide("sieve", 5.0, nodes, runs, [Waiting(job("other", "c", 0, 1.0, cpu=3.0))], ledger=book)
    assert d.reasons[0].text == "waiting: no quota in this resource group, nothing idle to borrow"


def test_without_a_ledger_nothing_changes():
    waiting = [Waiting(job("a1", "a", 8, 1.0))]
    assert decide("gang-fifo", 1.0, NODES, [], waiting).starts[0].placement == {"n0": 4, "n1": 4}


def test_a_project_pushed_over_its_share_by_the_decision_keeps_its_running_job():
    """Found by the property below: a (share 4, borrows) runs 4 GPUs; sieve starts a's two small jobs
    (now over its share) and must not then stop a's running job to make room for b's job within b's share."""
    shares = {"a": Share("a", gpus=4, can_borrow=True, can_lend=False),
              "b": Share("b", gpus=6, can_borrow=False, can_lend=True),
              "c": Share("c", gpus=2, can_borrow=False, can_lend=True)}
    runs = [Running(job("r0", "a", 4, checkpoints=True), {"n0": 4}, 0.0)]
    waiting = [Waiting(job(f"w{i}", p, g, 10.0 + i)) for i, (p, g) in enumerate(
        [("c", 4), ("b", 4), ("c", 1), ("a", 1), ("a", 1), ("b", 4)])]
    d = decide("sieve", 100.0, [Node("n0", 4), Node("n1", 4)], runs, waiting,
               ledger=Ledger((8, 0.0, 0.0), shares, runs), max_preemptions=1)
    assert d.preempt == [], d


# ---- properties on random states ------------------------------------------------------------------------

PROJECTS = ("a", "b", "c")
share_st = st.builds(lambda gpus, borrow, lend: (gpus, borrow, lend), st.integers(0, 8), st.booleans(), st.booleans())
job_st = st.tuples(st.sampled_from(PROJECTS), st.sampled_from([1, 2, 4]), st.booleans())


@settings(max_examples=150, deadline=None)
@given(shares=st.dictionaries(st.sampled_from(PROJECTS), share_st, max_size=3),
       running=st.lists(job_st, max_size=6), waiting=st.lists(job_st, min_size=1, max_size=6),
       policy=st.sampled_from(POLICIES))
def test_quota_decisions_keep_their_promises(shares, running, waiting, policy):
    """Whatever the state: nodes never over-committed; a project that does not borrow never goes past its
    share; what is preempted for a quota belongs to a project using more than its share; every job not
    started says why."""
    book_shares = {p: Share(p, gpus=g, can_borrow=b, can_lend=lend) for p, (g, b, lend) in shares.items()}
    plan_nodes = [Node("n0", 4), Node("n1", 4)]
    runs, free = [], {"n0": 4, "n1": 4}
    for i, (project, gpus, ckpt) in enumerate(running):
        node = next((n for n, f in free.items() if f >= gpus), None)
        if node is None:
            continue
        free[node] -= gpus
        runs.append(Running(job(f"r{i}", project, gpus, checkpoints=ckpt), {node: gpus}, float(i)))
    queue = [Waiting(job(f"w{i}", project, gpus, 10.0 + i)) for i, (project, gpus, _) in enumerate(waiting)]
    book = Ledger((8, 0.0, 0.0), book_shares, runs)
    before = {p: book.use(p)[0] for p in PROJECTS}
    borrowing_before = {p for p in PROJECTS if book.borrowing(p)}
    d = decide(policy, 100.0, plan_nodes, runs, queue, ledger=Ledger((8, 0.0, 0.0), book_shares, runs),
               max_preemptions=1)

    gone = set(d.preempt)
    used = {"n0": 0, "n1": 0}
    for r in runs:
        if r.job.id not in gone:
            for n, g in r.placement.items():
                used[n] += g
    started = {s.job_id for s in d.starts}
    for s in d.starts:
        for n, g in s.placement.items():
            used[n] += g
    assert all(v <= 4 for v in used.values()), (used, d)
    by_id = {w.job.id: w.job for w in queue} | {r.job.id: r.job for r in runs}
    for p, share in book_shares.items():
        if not share.can_borrow:
            after = sum(by_id[j].gpus for j in started if by_id[j].project == p) + before[p] - sum(
                by_id[j].gpus for j in gone if by_id[j].project == p)
            assert after <= max(share.gpus, before[p]), (p, after, d)
    if policy != "tiresias":  # only the quota reclaim preempts
        assert {by_id[j].project for j in gone} <= borrowing_before, d
    assert {r.job_id for r in d.reasons} == {w.job.id for w in queue} - started
