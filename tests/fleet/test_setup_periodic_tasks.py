import json
from io import StringIO

import pytest
from celery import shared_task
from django.apps import apps
from django.core.management import CommandError, call_command
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from fleet.management.commands.setup_periodic_tasks import MANAGED_MARKER, declared_jobs
from fleet.periodic import PeriodicJob

pytestmark = pytest.mark.django_db



@shared_task(name="tests.prune")
def prune(days: int = 7) -> None:
    """A task the test jobs name: only tasks Celery knows may be scheduled."""


PRUNE = PeriodicJob(name="test: prune things", task="tests.prune", every_seconds=300, kwargs={"days": 7})


def setup_tasks() -> str:
    out = StringIO()
    call_command("setup_periodic_tasks", stdout=out)
    return out.getvalue()


@pytest.fixture
def fleet_jobs(monkeypatch):
    """Declare extra jobs on the kernel's AppConfig, as an app would."""
    config = apps.get_app_config("fleet")
    original = config.periodic_tasks

    def declare(*jobs: PeriodicJob):
        monkeypatch.setattr(config, "periodic_tasks", original + jobs)

    return declare


def test_it_installs_every_declared_job_including_the_worker_heartbeat(fleet_jobs):
    fleet_jobs(PRUNE)

    setup_tasks()

    heartbeat = PeriodicTask.objects.get(name="fleet: worker heartbeat")
    assert heartbeat.task == "fleet.worker_heartbeat"
    assert (heartbeat.interval.every, heartbeat.interval.period) == (30, IntervalSchedule.SECONDS)
    assert heartbeat.expire_seconds == 25 and heartbeat.enabled
    prune = PeriodicTask.objects.get(name=PRUNE.name)
    assert json.loads(prune.kwargs) == {"days": 7}
    assert prune.expire_seconds == 300  # by default a tick expires after one interval
    assert prune.description.startswith(MANAGED_MARKER)
    assert PeriodicTask.objects.filter(description__startswith=MANAGED_MARKER).count() == len(declared_jobs())


def test_running_it_again_changes_nothing(fleet_jobs):
    fleet_jobs(PRUNE)
    setup_tasks()
    before = list(PeriodicTask.objects.values_list("id", "name", "date_changed").order_by("id"))
    schedules = IntervalSchedule.objects.count()

    output = setup_tasks()

    assert "0 created, 0 updated" in output and "0 disabled" in output
    assert list(PeriodicTask.objects.values_list("id", "name", "date_changed").order_by("id")) == before
    assert IntervalSchedule.objects.count() == schedules


def test_a_changed_declaration_updates_the_row_in_place(fleet_jobs):
    fleet_jobs(PRUNE)
    setup_tasks()
    row_id = PeriodicTask.objects.get(name=PRUNE.name).id

    fleet_jobs(
        PeriodicJob(name=PRUNE.name, task="tests.prune", every_seconds=60, kwargs={"days": 1}, expires_seconds=50)
    )
    output = setup_tasks()

    row = PeriodicTask.objects.get(name=PRUNE.name)
    assert row.id == row_id and "1 updated" in output
    assert (row.interval.every, json.loads(row.kwargs), row.expire_seconds) == (60, {"days": 1}, 50)


def test_a_job_no_longer_declared_is_disabled_and_a_hand_made_row_is_left_alone(fleet_jobs):
    fleet_jobs(PRUNE)
    setup_tasks()
    every_minute = IntervalSchedule.objects.create(every=60, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(name="operator: nightly report", task="x.report", interval=every_minute)

    fleet_jobs()
    output = setup_tasks()

    assert "1 disabled" in output
    assert PeriodicTask.objects.get(name=PRUNE.name).enabled is False
    assert PeriodicTask.objects.get(name="operator: nightly report").enabled is True
    assert PeriodicTask.objects.get(name="fleet: worker heartbeat").enabled is True


def test_a_job_declared_again_is_enabled_again(fleet_jobs):
    fleet_jobs(PRUNE)
    setup_tasks()
    fleet_jobs()
    setup_tasks()

    fleet_jobs(PRUNE)
    setup_tasks()

    assert PeriodicTask.objects.get(name=PRUNE.name).enabled is True


def test_an_operator_edit_to_a_managed_row_is_put_back(fleet_jobs):
    setup_tasks()
    PeriodicTask.objects.filter(name="fleet: worker heartbeat").update(enabled=False, task="other")

    setup_tasks()

    row = PeriodicTask.objects.get(name="fleet: worker heartbeat")
    assert (row.enabled, row.task) == (True, "fleet.worker_heartbeat")


def test_it_refuses_a_name_declared_twice(fleet_jobs):
    fleet_jobs(PRUNE, PeriodicJob(name=PRUNE.name, task="tests.prune", every_seconds=10))
    with pytest.raises(CommandError, match="declared twice"):
        setup_tasks()
    assert not PeriodicTask.objects.filter(name=PRUNE.name).exists()


@pytest.mark.parametrize("every", [0, 0.5, 1.5])
def test_it_refuses_an_interval_that_is_not_whole_seconds(fleet_jobs, every):
    fleet_jobs(PeriodicJob(name="test: odd", task="tests.prune", every_seconds=every))
    with pytest.raises(CommandError, match="whole number"):
        setup_tasks()


def test_it_refuses_something_that_is_not_a_periodic_job(fleet_jobs):
    fleet_jobs(("test: tuple", "tests.tuple", 60))
    with pytest.raises(CommandError, match="PeriodicJob"):
        setup_tasks()


def test_it_refuses_a_task_no_worker_knows(fleet_jobs):
    fleet_jobs(PeriodicJob(name="test: typo", task="tests.prnue", every_seconds=60))

    with pytest.raises(CommandError, match="tests.prnue"):
        setup_tasks()
    assert not PeriodicTask.objects.filter(name="test: typo").exists()


def test_every_job_the_apps_declare_names_a_known_task():
    assert declared_jobs()  # raises CommandError for an unknown one
