"""Best fit on nodes that track CPU and memory: the fullest node that holds the job, CPU counted."""
from __future__ import annotations

from myapp.scheduler.model import Job, Node
from myapp.scheduler.placement import Plan


def test_a_cpu_job_goes_on_the_node_with_the_least_cpu_that_holds_it():
    plan = Plan([Node("big", 0, cpu=2.0), Node("small", 0, cpu=1.0)], ())
    assert plan.fit(Job("nb", "g", 0, 0.0, cpu=1.0)) == {"small": 0}  # the big node stays whole for a 2-CPU job
    plan.take(Job("nb", "g", 0, 0.0, cpu=1.0), {"small": 0})
    assert plan.fit(Job("t", "g", 0, 0.0, cpu=2.0)) == {"big": 0}


def test_gpus_come_first_then_memory():
    plan = Plan([Node("a", 8, cpu=8.0, memory=8.0), Node("b", 4, cpu=16.0, memory=4.0),
                 Node("c", 4, cpu=16.0, memory=2.0)], ())
    assert plan.fit(Job("j", "g", 2, 0.0, cpu=1.0, memory=1.0)) == {"c": 2}  # fewest free GPUs, then least memory
