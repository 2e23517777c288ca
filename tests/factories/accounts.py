import factory

from accounts.models import User

DEFAULT_PASSWORD = "correct horse battery"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    name = factory.Sequence(lambda n: f"User {n}")
    password = factory.PostGenerationMethodCall("set_password", DEFAULT_PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class AdminFactory(UserFactory):
    role = User.Role.ADMIN


class OAuthUserFactory(UserFactory):
    """An account created through OAuth sign-in: a provider and no usable password."""

    provider = "github"
    password = factory.PostGenerationMethodCall("set_unusable_password")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # declared again: it must run after `password`
        if create:
            obj.save()
