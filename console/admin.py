"""Django plumbing out of the operator's way: auth groups (Fleet's roles are its own), Celery
beat's schedule tables (the periodic tasks themselves stay, under "all applications") and
social-auth's tables (sign-ins are handled by Fleet). Loaded last (console is the last app),
after the apps that registered them."""

from django.contrib import admin
from django.contrib.auth.models import Group
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, SolarSchedule
from social_django.models import Association, Nonce, UserSocialAuth

PLUMBING = (Group, ClockedSchedule, CrontabSchedule, IntervalSchedule, SolarSchedule, Association, Nonce,
            UserSocialAuth)

for model in PLUMBING:
    if admin.site.is_registered(model):
        admin.site.unregister(model)
