"""The operators' console on the Django admin (theme django-unfold): the fleet dashboard, the
sidebar, the engines' health panel, and the plumbing tables kept out of the way."""
