"""Admin console: users, searchable by email and name, filtered by role, provider and status.

Operators create password users here (8 to 128 characters, as the API requires). The
provider and avatar are set by the user's own sign-ins and profile, so they are read-only.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.text import capfirst
from unfold.forms import AdminPasswordChangeForm

from fleet.admin_base import ModelAdmin, TabularInline
from fleet.errors import FleetError

from .deletion import user_delete, user_holdings
from .models import User, UserGroup, UserGroupMember
from .services import password_length_problem
from .tokens import sessions_revoke


def _email_unused(form: forms.ModelForm) -> str:
    """Emails are unique whatever their case; say so on the field rather than failing at save."""
    email = form.cleaned_data["email"].strip()
    others = User.objects.filter(email__iexact=email)
    if form.instance.pk:
        others = others.exclude(pk=form.instance.pk)
    if others.exists():
        raise forms.ValidationError("A user with this email already exists.")
    return email


class UserCreateForm(AdminUserCreationForm):
    class Meta:
        model = User
        fields = ("email", "name", "role")

    def clean_email(self):
        return _email_unused(self)

    def clean_password1(self):
        password = self.cleaned_data.get("password1")
        problem = password and password_length_problem(password)
        if problem:
            raise forms.ValidationError(problem)
        return password


class UserEditForm(UserChangeForm):
    class Meta:
        model = User
        fields = ("email", "name", "role", "is_active", "password")

    def clean_email(self):
        return _email_unused(self)


@admin.register(User)
class UserAdmin(DjangoUserAdmin, ModelAdmin):
    form = UserEditForm
    add_form = UserCreateForm
    change_password_form = AdminPasswordChangeForm  # the console theme's, same checks as Django's
    list_display = ("email", "name", "role", "provider", "is_active", "created_at", "last_login")
    list_filter = ("role", "provider", "is_active")
    search_fields = ("email", "name")
    ordering = ("-created_at",)
    filter_horizontal = ()
    readonly_fields = ("id", "provider", "avatar_preview", "created_at", "last_login")
    fieldsets = (
        (None, {"fields": ("id", "email", "password")}),
        ("Profile", {"fields": ("name", "avatar_preview", "provider")}),
        ("Access", {"fields": ("role", "is_active")}),
        ("Dates", {"fields": ("created_at", "last_login")}),
    )
    add_fieldsets = (
        (
            None,
            {
                "classes": ("wide",),
                "fields": ("email", "name", "role", "usable_password", "password1", "password2"),
                "description": "Role 'admin' makes a platform admin, who may use this console.",
            },
        ),
    )

    actions = ("sign_out_everywhere",)

    def user_change_password(self, request, id, form_url=""):
        """An admin setting a user's password ends that user's sessions, as changing it does."""
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:
            user = self.get_object(request, unquote(id))
            if user is not None:
                sessions_revoke(user=user)
        return response

    @admin.action(description="Sign out everywhere (end every session of the selected users)")
    def sign_out_everywhere(self, request, queryset):
        for user in queryset:
            sessions_revoke(user=user)
        self.message_user(request, f"Signed out {len(queryset)} user(s) everywhere.")

    # -- deleting: through accounts.deletion, never a bare cascade --------------------------

    def _entry(self, obj) -> str:
        """An object as Django's delete confirmation lists it (admin.utils.get_deleted_objects)."""
        opts = obj._meta
        plain = f"{capfirst(opts.verbose_name)}: {obj}"
        if not self.admin_site.is_registered(type(obj)):
            return plain
        try:
            url = reverse(f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_change", args=(quote(obj.pk),))
        except NoReverseMatch:
            return plain
        return format_html('{}: <a href="{}">{}</a>', capfirst(opts.verbose_name), url, obj)

    def get_deleted_objects(self, objs, request):
        """The confirmation page: what the services say must be deleted first is "protected"
        (Django then refuses and deletes nothing), named in their words; what goes with a user
        (an idle Remote Docker host) is listed as deleted, not as protected."""
        users = list(objs)
        to_delete, counts, perms_needed, protected = super().get_deleted_objects(users, request)
        blockers, covered = [], set()
        for user in users:
            for holdings in user_holdings(user=user):
                blockers += [f"{user.email}: {line}" for line in holdings.blockers]
                covered.update(self._entry(obj) for obj in holdings.held + holdings.released)
                for obj in holdings.released:
                    to_delete.append(self._entry(obj))
                    plural = str(obj._meta.verbose_name_plural)
                    counts[plural] = counts.get(plural, 0) + 1
        protected = blockers + [entry for entry in protected if str(entry) not in covered]
        return to_delete, counts, perms_needed, protected

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except FleetError as exc:  # changed between the confirmation and the deletion
            self.message_user(request, f"Could not delete the user: {exc.message}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:accounts_user_change", args=[quote(object_id)]))

    def delete_model(self, request, obj):
        user_delete(user=obj)

    def delete_queryset(self, request, queryset):
        deleted, failed = 0, []
        for user in queryset:
            try:
                user_delete(user=user)
                deleted += 1
            except FleetError as exc:
                failed.append(exc.message)
        for failure in failed:
            self.message_user(request, f"Could not delete: {failure}", messages.ERROR)
        request.fleet_users_deleted = deleted if failed else None

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        # Django's bulk delete then reports every selected user as deleted: say how many were.
        deleted = getattr(request, "fleet_users_deleted", None)
        if deleted is not None and str(message).startswith("Successfully deleted"):
            request.fleet_users_deleted = None
            if not deleted:
                return
            message = f"Deleted {deleted} user(s)."
        super().message_user(request, message, level, *args, **kwargs)

    @admin.display(description="Avatar")
    def avatar_preview(self, user: User):
        if not user.avatar:
            return "-"
        # Avatars are validated data:image URLs (no SVG) when saved through the API.
        return format_html('<img src="{}" alt="" style="max-height: 64px; max-width: 64px">', user.avatar)


class UserGroupMemberInline(TabularInline):
    model = UserGroupMember
    extra = 0
    fields = ("user", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("user",)


@admin.register(UserGroup)
class UserGroupAdmin(ModelAdmin):
    """User groups: grants of platform targets (agents.targets) name them."""

    list_display = ("name", "description", "member_count", "created_at")
    search_fields = ("name", "memberships__user__email")
    fields = ("id", "name", "description", "created_at", "updated_at")
    readonly_fields = ("id", "created_at", "updated_at")
    inlines = (UserGroupMemberInline,)

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(members_total=Count("memberships", distinct=True))

    @admin.display(description="Members", ordering="members_total")
    def member_count(self, group: UserGroup) -> int:
        return group.members_total
