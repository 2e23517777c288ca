"""Which run of tests the OpenClaw started ahead is for (tests/infra/runtime_preboot.py)."""

from types import SimpleNamespace

from tests.infra.runtime_preboot import RunPlan

OWN = SimpleNamespace(SHARES_RUNTIMES=False)
SHARING = SimpleNamespace(SHARES_RUNTIMES=True)
PLAIN = SimpleNamespace()


def _item(nodeid: str, module, *fixtures: str):
    return SimpleNamespace(nodeid=nodeid, module=module, fixturenames=list(fixtures))


def test_the_next_run_is_the_next_module_taking_an_openclaw_of_its_own():
    other_own = SimpleNamespace(SHARES_RUNTIMES=False)
    items = [_item("a1", OWN, "openclaw_runtime"), _item("b1", SHARING, "openclaw_runtime"),
             _item("c1", PLAIN, "db"), _item("d1", other_own, "fake_model"), _item("d2", other_own, "openclaw_runtime")]

    plan = RunPlan(items)

    assert plan.next_needing_openclaw(plan.run_of(items[0])) == plan.run_of(items[4]) == plan.run_of(items[3])
    assert plan.next_needing_openclaw(plan.run_of(items[4])) is None


def test_a_module_run_in_two_stretches_is_two_runs():
    # pytest-django runs a module's transactional tests after the others: two runtimes, two runs.
    items = [_item("a1", OWN, "openclaw_runtime"), _item("c1", PLAIN), _item("a2", OWN, "openclaw_runtime")]

    plan = RunPlan(items)

    assert plan.run_of(items[0]) != plan.run_of(items[2])
    assert plan.next_needing_openclaw(plan.run_of(items[0])) == plan.run_of(items[2])
    assert plan.next_needing_openclaw(plan.run_of(items[1])) == plan.run_of(items[2])


def test_the_next_run_is_one_of_the_same_engine_group_the_worker_runs():
    # tests/conftest.py deals the runtime modules to two groups, each run by its own worker.
    def grouped(nodeid, module, group):
        marker = SimpleNamespace(args=(group,), kwargs={})
        return SimpleNamespace(nodeid=nodeid, module=module, fixturenames=["openclaw_runtime"],
                               get_closest_marker=lambda name: marker if name == "xdist_group" else None)

    first, second, third = (SimpleNamespace(SHARES_RUNTIMES=False) for _ in range(3))
    items = [grouped("a1", first, "engine"), grouped("b1", second, "engine2"), grouped("c1", third, "engine")]

    plan = RunPlan(items)

    assert plan.next_needing_openclaw(plan.run_of(items[0])) == plan.run_of(items[2])
    assert plan.next_needing_openclaw(plan.run_of(items[1])) is None
