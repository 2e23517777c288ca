"""What a principal may do by its scopes."""

from fleet.api.principal import API_KEY, Principal


def key(*scopes: str) -> Principal:
    return Principal(user=object(), kind=API_KEY, scopes=frozenset(scopes))


def test_a_session_has_every_scope():
    assert Principal(user=object()).has_scope("agents:write")


def test_a_key_has_exactly_its_scopes():
    assert key("agents:read").has_scope("agents:read")
    assert not key("agents:read").has_scope("agents:write")
    assert not key("workspaces:read").has_scope("agents:read")


def test_agents_write_includes_reading_agents():
    assert key("agents:write").has_scope("agents:read")
    assert not key("agents:write").has_scope("workspaces:read")
