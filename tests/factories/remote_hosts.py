import factory

from agents.targets.models import RemoteHost
from tests.infra.sshd import openssh_private_key

from .accounts import UserFactory


class RemoteHostFactory(factory.django.DjangoModelFactory):
    """A personal Remote Docker host that passed its test (a raw row: remote_host_create makes
    untested hosts, and only a real SSH server makes them ready). `owner=None`: a platform host."""

    class Meta:
        model = RemoteHost

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"host-{n}")
    host = "192.0.2.10"
    port = 22
    username = "deploy"
    auth_type = "key"
    private_key = factory.LazyFunction(openssh_private_key)
    status = "ready"
    host_key_fingerprint = "SHA256:" + "A" * 43
    docker_version = "27.0.0"
