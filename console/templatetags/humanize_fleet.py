"""Small formatting filters of the console's pages."""

from django import template

register = template.Library()


@register.filter
def usd(value) -> str:
    """Dollars as operators read them: cents, and more digits below a cent."""
    amount = float(value or 0)
    return f"${amount:,.2f}" if amount == 0 or amount >= 0.01 else f"${amount:.6f}".rstrip("0")
