"""The errors of the files, export and migration routes (fleet.errors families)."""

from fleet.errors import Conflict, Forbidden, InvalidRequest, NotFound, PayloadTooLarge


class PathOutsideState(InvalidRequest):
    code = "invalid_path"
    default_message = "The path leaves the agent's state folder."


class StatePathMissing(NotFound):
    default_message = "No such file or folder in the agent's state."


class FileTooLargeToRead(PayloadTooLarge):
    code = "payload_too_large"


class FilesUnsupported(Conflict):
    code = "unsupported"
    default_message = "The agent's deploy target does not support state files yet."


class BundleInvalid(InvalidRequest):
    code = "invalid_bundle"
    default_message = "The bundle is not a valid agent export."


class DraftNotFound(NotFound):
    default_message = "No such migration draft (it may have expired)."


class SecretFile(Forbidden):
    code = "secret_file"
    default_message = ("This file holds the runtime's secrets, which Fleet manages; it is neither served "
                       "nor written through the files API.")


class StateKeptChanging(Conflict):
    code = "state_changing"
    default_message = "The agent's state kept changing while it was exported; stop the agent, or try again."


class BundleTooLarge(PayloadTooLarge):
    """A bundle within the upload cap that unpacks past a limit (a bomb); the message names it."""

    code = "bundle_too_large"
    default_message = "The bundle unpacks past a limit of migration bundles."


class DraftQuotaExceeded(Conflict):
    code = "draft_quota_exceeded"
    default_message = "You hold as many migration drafts as allowed; deploy one or let them expire."
