import factory

from workspaces.models import ApiKey, Workspace
from workspaces.roles import Role
from workspaces.services import api_key_create, membership_add, workspace_create

from .accounts import UserFactory


class WorkspaceFactory(factory.django.DjangoModelFactory):
    """A workspace made by workspace_create: its owner is also its owner member."""

    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Workspace {n}")
    owner = factory.SubFactory(UserFactory)

    @classmethod
    def _create(cls, model_class, *, owner, name) -> Workspace:
        return workspace_create(owner=owner, name=name)


def make_member(workspace: Workspace, role: Role | str, user=None):
    """A user (a new one unless given) added to `workspace` with `role` by membership_add, as its owner would."""
    user = user or UserFactory()
    rank = role if isinstance(role, Role) else Role.parse(role)
    membership_add(workspace=workspace, acting_role=Role.OWNER, email=user.email, role=rank)
    return user


def make_api_key(*, workspace, created_by=None, scopes=("agents:read",), name="test key") -> tuple[ApiKey, str]:
    """An API key made by api_key_create (issued by the workspace owner unless `created_by` is
    given) and its raw secret: the secret is what a client sends."""
    return api_key_create(workspace=workspace, created_by=created_by or workspace.owner, name=name, scopes=list(scopes))
