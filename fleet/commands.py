"""Management commands that change something derive from `RecordedCommand`: each run leaves one
audit row (the command's name and the names of the options given, never their values). The
recorder is the audit app's, registered when it is ready (it sits above fleet)."""

from __future__ import annotations

from collections.abc import Callable

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

# (command name, option names, result) -> None
CommandRecorder = Callable[[str, list[str], str], None]
_recorder: CommandRecorder | None = None

# BaseCommand's own options: how it runs, not what it changes.
_RUNNER_OPTIONS = frozenset({"verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color",
                             "skip_checks", "stdout", "stderr"})


def register_command_recorder(recorder: CommandRecorder) -> None:
    global _recorder
    _recorder = recorder


def given_options(options: dict) -> list[str]:
    return sorted(name for name, value in options.items()
                  if name not in _RUNNER_OPTIONS and value not in (None, False, "", [], ()))


class RecordedCommand(BaseCommand):
    # True: the command and its row are one transaction. False for a command that commits as it
    # goes (batches of a re-encryption, calls to a runtime): its row follows its end, "ok", or
    # "error" when it stopped part way (a CommandError is a refusal before any change: no row).
    one_transaction = True
    command_name = ""  # defaults to the module's name (`bootstrap_admin`)

    def execute(self, *args, **options):
        name = self.command_name or type(self).__module__.rsplit(".", 1)[-1]
        given = given_options(options)
        if _recorder is None:
            return super().execute(*args, **options)
        if self.one_transaction:
            with transaction.atomic():
                output = super().execute(*args, **options)
                _recorder(name, given, "ok")
            return output
        try:
            output = super().execute(*args, **options)
        except CommandError:
            raise  # the command's own refusal, said before it changed anything: no row
        except Exception:
            _recorder(name, given, "error")  # stopped part way: what it committed has its row
            raise
        _recorder(name, given, "ok")
        return output
