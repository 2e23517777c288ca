import factory

from workspaces.keys import api_key_digest, api_key_generate, api_key_prefix
from workspaces.models import ApiKey, Membership, Workspace
from workspaces.roles import Role

from .accounts import UserFactory


class WorkspaceFactory(factory.django.DjangoModelFactory):
    """A workspace whose owner is also its owner member."""

    class Meta:
        model = Workspace
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Workspace {n}")
    owner = factory.SubFactory(UserFactory)

    @factory.post_generation
    def _owner_membership(obj, create, extracted, **kwargs):
        if create:
            Membership.objects.get_or_create(workspace=obj, user=obj.owner, defaults={"role": Role.OWNER.label})


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    workspace = factory.SubFactory(WorkspaceFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.VIEWER.label


def make_member(workspace, role: Role | str, user=None):
    """A user who is a member of `workspace` with `role`."""
    label = role.label if isinstance(role, Role) else role
    return MembershipFactory(workspace=workspace, user=user or UserFactory(), role=label).user


def make_api_key(*, workspace, created_by=None, scopes=("agents:read",), name="test key") -> tuple[ApiKey, str]:
    """An API key row and its raw secret (the secret is what a client sends)."""
    raw = api_key_generate()
    key = ApiKey.objects.create(
        workspace=workspace,
        created_by=created_by or workspace.owner,
        name=name,
        prefix=api_key_prefix(raw),
        digest=api_key_digest(raw),
        scopes=list(scopes),
    )
    return key, raw
