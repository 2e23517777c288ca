import factory

from accounts.models import User

DEFAULT_PASSWORD = "correct horse battery"


class UserFactory(factory.django.DjangoModelFactory):
    """An active user with DEFAULT_PASSWORD."""

    # A raw row: user_register applies the signup policy (SIGNUP_ENABLED; the first user of a
    # self-hosted install becomes admin), which tests that merely need a user must not depend on.
    class Meta:
        model = User
        skip_postgeneration_save = True

    email = factory.Sequence(lambda n: f"user{n}@example.com")
    name = factory.Sequence(lambda n: f"User {n}")
    password = factory.PostGenerationMethodCall("set_password", DEFAULT_PASSWORD)

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # noqa: N805 - factory_boy passes the built object, not the factory
        if create:
            obj.save()


class AdminFactory(UserFactory):
    """A platform admin (a raw row too: user_create_first_admin makes only the first one)."""

    role = User.Role.ADMIN


class OAuthUserFactory(UserFactory):
    """An account as OAuth sign-in leaves it: a provider and no usable password (a raw row, as
    user_oauth_sign_in registers through the same signup policy)."""

    provider = "github"
    password = factory.PostGenerationMethodCall("set_unusable_password")

    # Declared again: it must run after `password`.
    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # noqa: N805 - factory_boy passes the built object, not the factory
        if create:
            obj.save()
