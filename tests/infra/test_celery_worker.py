import queue
import threading

import pytest
from django.db import transaction

from accounts.models import User
from fleet.celery import app
from tests.factories.accounts import UserFactory

# What the worker saw, handed back to the test thread.
seen: queue.Queue = queue.Queue()


@app.task(name="tests.infra.report_user_email")
def report_user_email(user_id):
    user = User.objects.filter(pk=user_id).first()
    seen.put((threading.current_thread() is threading.main_thread(), user and user.email))


@pytest.fixture(autouse=True)
def _empty_seen():
    while not seen.empty():
        seen.get_nowait()


@pytest.mark.django_db(transaction=True)
def test_a_task_sent_with_delay_runs_in_the_worker_against_the_test_database(celery_worker_live):
    user = UserFactory(email="worker@example.com")

    report_user_email.delay(user.pk)

    in_main_thread, email = seen.get(timeout=15)
    assert in_main_thread is False
    assert email == "worker@example.com"


@pytest.mark.django_db(transaction=True)
def test_a_task_sent_on_commit_sees_the_rows_of_its_transaction(celery_worker_live):
    with transaction.atomic():
        user = UserFactory(email="committed@example.com")
        report_user_email.delay_on_commit(user.pk)
        with pytest.raises(queue.Empty):
            seen.get(timeout=0.5)  # nothing is sent before the commit

    assert seen.get(timeout=15) == (False, "committed@example.com")


@pytest.mark.django_db(transaction=True)
def test_a_task_from_a_rolled_back_transaction_is_never_sent(celery_worker_live):
    with pytest.raises(RuntimeError), transaction.atomic():
        report_user_email.delay_on_commit("00000000-0000-0000-0000-000000000000")
        raise RuntimeError("roll back")
    user = UserFactory(email="after@example.com")
    report_user_email.delay(user.pk)

    assert seen.get(timeout=15) == (False, "after@example.com")
    assert seen.empty()


@pytest.mark.django_db(transaction=True)
def test_wait_until_returns_the_first_truthy_value_and_fails_on_timeout(celery_worker_live):
    user = UserFactory()
    report_user_email.delay(user.pk)

    assert celery_worker_live.wait_until(lambda: not seen.empty()) is True
    with pytest.raises(AssertionError, match="not met within"):
        celery_worker_live.wait_until(lambda: False, timeout=0.2)
