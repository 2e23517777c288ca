"""Dropping what the gateway no longer needs: reservations that lapsed (their process died
before settling) and traffic hours older than the longest window the API shows."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from .models import Reservation, TrafficHour
from .traffic import MAX_HOURS


def gateway_purge() -> tuple[int, int]:
    now = timezone.now()
    lapsed, _ = Reservation.objects.filter(expires_at__lte=now).delete()
    hours, _ = TrafficHour.objects.filter(hour__lt=now - timedelta(hours=MAX_HOURS + 1)).delete()
    return lapsed, hours
