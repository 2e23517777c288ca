"""checks.scheduler of /api/health and the periodic-job gauges: a job beat has not sent, or no
worker has run, for three of its periods is "late" (fleet.scheduler)."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from fleet.heartbeat import heartbeat_record
from fleet.scheduler import periodic_run_record

pytestmark = pytest.mark.django_db

MONITOR = "agents: monitor running agents"  # every 30 s
MONITOR_TASK = "agents.tasks.monitor_agents"


@pytest.fixture
def installed(settings):
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"  # no configuration warning
    call_command("setup_periodic_tasks", verbosity=0)
    PeriodicTask.objects.update(last_run_at=timezone.now())
    heartbeat_record()


def scheduler(api_client):
    return api_client.get("/api/health").json()["checks"]["scheduler"]


def sent(name, seconds_ago):
    PeriodicTask.objects.filter(name=name).update(last_run_at=timezone.now() - timedelta(seconds=seconds_ago))


def test_every_installed_job_is_ok_when_beat_sends_it_in_time(api_client, installed):
    checks = scheduler(api_client)

    assert set(checks) == set(PeriodicTask.objects.filter(enabled=True).values_list("name", flat=True))
    assert set(checks.values()) == {"ok"}


def test_a_job_beat_has_not_sent_for_three_periods_is_late_and_degrades_the_status(api_client, installed):
    sent(MONITOR, 91)

    body = api_client.get("/api/health").json()

    assert body["checks"]["scheduler"][MONITOR] == "late"
    assert body["status"] == "degraded"
    assert api_client.get("/api/health").status_code == 200


def test_a_job_within_three_periods_is_not_late(api_client, installed):
    sent(MONITOR, 85)

    assert scheduler(api_client)[MONITOR] == "ok"


def test_a_job_beat_sends_but_no_worker_runs_is_late(api_client, installed):
    periodic_run_record(MONITOR_TASK, at=time.time() - 100)  # ticks dropped since (expired behind a burst)

    assert scheduler(api_client)[MONITOR] == "late"
    periodic_run_record(MONITOR_TASK)
    assert scheduler(api_client)[MONITOR] == "ok"


def test_a_job_never_sent_is_judged_from_its_installation(api_client, installed):
    PeriodicTask.objects.filter(name=MONITOR).update(last_run_at=None,
                                                     date_changed=timezone.now() - timedelta(minutes=5))

    assert scheduler(api_client)[MONITOR] == "late"


def test_disabled_jobs_are_not_judged(api_client, installed):
    sent(MONITOR, 3600)
    PeriodicTask.objects.filter(name=MONITOR).update(enabled=False)

    assert MONITOR not in scheduler(api_client)


def test_a_job_added_by_hand_is_judged_by_its_own_interval(api_client, installed):
    hourly = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.HOURS)
    PeriodicTask.objects.create(name="by hand", task="fleet.worker_heartbeat", interval=hourly,
                                last_run_at=timezone.now() - timedelta(hours=2))

    assert scheduler(api_client)["by hand"] == "ok"


def test_only_periodic_tasks_are_recorded(installed):
    from django.core.cache import cache

    periodic_run_record("agents.tasks.provision_agent")

    assert cache.get("fleet:periodic-ran:agents.tasks.provision_agent") is None


def test_the_gauges_say_which_job_is_late(client, installed, settings):
    settings.METRICS_PUBLIC = True
    sent(MONITOR, 200)

    text = client.get("/metrics").content.decode()

    assert f'fleet_periodic_job_late{{job="{MONITOR}"}} 1.0' in text
    assert 'fleet_periodic_job_late{job="agents: probe engines and targets"} 0.0' in text
    assert f'fleet_periodic_job_seconds_since_run{{job="{MONITOR}"}} 2' in text
