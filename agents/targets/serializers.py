"""Request and response shapes of the Remote Docker host routes (the names docs/api.md "Registered targets" uses).
Secrets are never answered: each one set reads `[REDACTED]`, each one not set null."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.fields import IntegerField, StrictCharField
from fleet.api.serializers import TimestampField

from .grants import GrantsIn, GrantsOut
from .remote_hosts import MASK


class AuthIn(serializers.Serializer):
    type = serializers.ChoiceField(choices=["key", "password"], required=False)
    # Secrets are taken as sent (no trimming); "[REDACTED]" sent back keeps the stored one.
    privateKey = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,  # noqa: N815
                                       max_length=16384)
    passphrase = serializers.CharField(required=False, allow_blank=True, allow_null=True, trim_whitespace=False,
                                       max_length=1024)
    password = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, max_length=1024)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("An object is required.")
        strings = ("privateKey", "password") + (("passphrase",) if data.get("passphrase") is not None else ())
        bad = {name: ["A string is required."] for name in strings if name in data and not isinstance(data[name], str)}
        if bad:
            raise serializers.ValidationError(bad)
        return super().to_internal_value(data)


class RemoteHostIn(serializers.Serializer):
    name = StrictCharField(max_length=100, required=False)
    host = StrictCharField(max_length=255, required=False)
    port = IntegerField(required=False)
    username = StrictCharField(max_length=100, required=False)
    auth = AuthIn(required=False)
    dockerSocket = StrictCharField(max_length=255, required=False)  # noqa: N815
    # PATCH only: null drops the pinned host key (accept a host key that changed on purpose).
    hostKeyFingerprint = serializers.CharField(required=False, allow_null=True)  # noqa: N815

    def validate_port(self, value):
        if not 1 <= value <= 65535:
            raise serializers.ValidationError("Give a port from 1 to 65535.")
        return value

    def validate_hostKeyFingerprint(self, value):  # noqa: N802 - DRF names it after the field
        if value is not None:
            raise serializers.ValidationError("Only null is accepted: the host key is pinned by a test.")
        return value


class AdminRemoteHostIn(RemoteHostIn):
    grants = GrantsIn(required=False)


class AuthOut(serializers.Serializer):
    type = serializers.CharField(source="auth_type")
    privateKey = serializers.SerializerMethodField()  # noqa: N815
    passphrase = serializers.SerializerMethodField()
    password = serializers.SerializerMethodField()

    @staticmethod
    def _mask(value) -> str | None:
        return MASK if value else None

    def get_privateKey(self, host) -> str | None:  # noqa: N802
        return self._mask(host.private_key)

    def get_passphrase(self, host) -> str | None:
        return self._mask(host.passphrase)

    def get_password(self, host) -> str | None:
        return self._mask(host.password)


class RemoteHostOut(serializers.Serializer):
    id = serializers.UUIDField()
    executionTargetId = serializers.CharField(source="execution_target_id")  # noqa: N815
    name = serializers.CharField()
    host = serializers.CharField()
    port = IntegerField()
    username = serializers.CharField()
    auth = AuthOut(source="*")
    dockerSocket = serializers.CharField(source="docker_socket")  # noqa: N815
    status = serializers.CharField()
    hostKeyFingerprint = serializers.CharField(source="host_key_fingerprint", allow_null=True)  # noqa: N815
    lastTestedAt = TimestampField(source="last_tested_at", allow_null=True)  # noqa: N815
    dockerVersion = serializers.CharField(source="docker_version", allow_null=True)  # noqa: N815
    lastError = serializers.CharField(source="last_error", allow_null=True)  # noqa: N815
    scope = serializers.SerializerMethodField()
    isOwner = serializers.SerializerMethodField()  # noqa: N815
    shares = serializers.SerializerMethodField()
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    def to_representation(self, host):
        body = super().to_representation(host)
        for name in ("hostKeyFingerprint", "dockerVersion", "lastError"):
            body[name] = body[name] or None
        return body

    def get_scope(self, host) -> str:
        return "platform" if host.owner_id is None else "personal"

    def get_isOwner(self, host) -> bool:  # noqa: N802
        user = self.context.get("user")
        return user is not None and host.owner_id == user.pk

    def get_shares(self, host) -> list[str]:
        """The workspaces a personal host is shared with: shown to its owner only."""
        if not self.get_isOwner(host):
            return []
        return [str(w) for w in self.context.get("shares", {}).get(host.pk, [])]


class AdminRemoteHostOut(RemoteHostOut):
    grants = serializers.SerializerMethodField()

    def get_grants(self, host) -> dict:
        grant_set = self.context["grants"][host.execution_target_id]
        return GrantsOut(grant_set.as_json()).data


class HostTestOut(serializers.Serializer):
    ok = serializers.BooleanField()
    status = serializers.CharField()
    hostKeyFingerprint = serializers.CharField(source="host_key_fingerprint", allow_null=True)  # noqa: N815
    dockerVersion = serializers.CharField(source="docker_version", allow_null=True)  # noqa: N815
    error = serializers.CharField(required=False)
    code = serializers.CharField(required=False)

    def to_representation(self, result):
        body = super().to_representation(result)
        if result.error is None:
            body.pop("error", None)
            body.pop("code", None)
        return body
