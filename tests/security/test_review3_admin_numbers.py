"""Review 3: a number past PostgreSQL's integer into an int4 column from an admin form.

The "Issue an API key" form's rate_limit has min_value=0 and no max_value
(newznab/admin.py). Django adapts an IntegerField's value as psycopg's Int4,
whose binary dumper (psycopg_binary) wraps it to 32 bits instead of failing:
99999999999 is stored as 1215752191 without a word, and 2147483648 wraps to
-2147483648, which the column's CHECK refuses: an IntegrityError, a 500.
Each case should be the form's error. Fails on dead99b.
"""

from __future__ import annotations

import pytest

from newznab.models import ApiKey

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", ["99999999999", "2147483648"])
def test_a_rate_limit_past_the_column_is_a_form_error(admin_client, value):
    admin_client.raise_request_exception = False
    response = admin_client.post("/admin/newznab/apikey/issue/", {"name": "x", "rate_limit": value})
    assert response.status_code == 200, f"{response.status_code} for rate_limit={value}"
    assert list(ApiKey.objects.values_list("rate_limit", flat=True)) == []  # none issued
