"""Category rules run under RE2: linear in the name, what RE2 refuses refused with its
reason, and a rule stored before that RE2 refuses skipped without failing anything."""

from __future__ import annotations

import json
import logging
import re
from io import StringIO

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from catalog.models import Release, RuleSetVersion
from catalog.rulesets import category_rules, current_rules, forget_current_rules
from catalog.services import store_files
from tests.support.cost import cpu_cost
from tests.support.factories import GroupFactory, RuleSetVersionFactory
from tests.support.reports import report
from usenet.categories import DEFAULT_CATEGORY_RULES, OTHER, CategoryRules

BACKTRACKING = "(a+)+$"


def test_a_nested_quantifier_costs_what_a_matching_name_costs():
    # Under re, (a+)+$ tries every split of the run of a's before it gives up
    # on the "!": 40 ms at 18 characters, doubling with each further one (a
    # day at 40). Under RE2 the name is read once. The baseline, the same run
    # without the "!", matches at once under either engine: a linear reading
    # of the one costs about what the other costs, so the bound of 20 leaves
    # wide room and an exponential one is thousands of times over it. CPU time,
    # least of five repeats (tests/support/cost.py).
    rules = CategoryRules([{"category": 2000, "name": [BACKTRACKING]}])
    hostile, baseline = "a" * 18 + "!", "a" * 18
    assert rules.categorize(hostile, []) == OTHER
    assert rules.categorize(baseline, []) == 2000

    def categorize(name):
        return rules.categorize(name, [])

    assert cpu_cost(categorize, hostile, calls=10) / cpu_cost(categorize, baseline, calls=10) < 20
    assert rules.categorize("a" * 10_000 + "!", []) == OTHER  # microseconds, not centuries


@pytest.mark.parametrize(
    "pattern",
    # \Z, (?x), a{1001} and a lone ")" got past the old syntax guard and ran under re.
    [r"name\Z", r"(?x) a b", r"a{1001}", r"a)", r"(?<=a)b", r"(a)\1", r"(?>a)", r"a++"],
)
def test_a_pattern_re2_refuses_is_refused_with_its_reason(pattern):
    with pytest.raises(ValueError, match="cannot run under RE2") as refused:
        CategoryRules([{"category": 2000, "name": ["(?i)x", pattern]}])
    assert str(refused.value).startswith("categories[0].name:")
    assert "linear" in str(refused.value)


def test_flags_of_one_pattern_do_not_reach_the_others():
    # The pre-filter joins every name pattern into one: "(?i)" stays in its own.
    rules = CategoryRules(
        [{"category": 2000, "name": ["(?i)movie"]}, {"category": 7020, "name": ["BOOK"]}]
    )
    assert rules.categorize("a.MOVIE", []) == 2000
    assert rules.categorize("a.BOOK", []) == 7020
    assert rules.categorize("a.book", []) == OTHER


# The default rules decided the same under re; ASCII names (RE2's \d is ASCII).
REFERENCE = [
    (
        rule["category"],
        [re.compile(p) for p in rule.get("name", [])],
        re.compile(rule["group"]) if "group" in rule else None,
    )
    for rule in DEFAULT_CATEGORY_RULES
]
WORDS = st.sampled_from(
    ["S01E02", "1x02", "s2", "2160p", "UHD", "4k", "720p", "1080i", "x264", "web-dl", "FLAC",
     "mp3", "m4b", "cbz", "epub", "retail.ebook", "-CODEX", ".iso", "x64", "2024.03.12", "a"]
)  # fmt: skip
ASCII_NAMES = st.lists(
    st.one_of(WORDS, st.text(st.sampled_from("ab01.-_ ()[]"), max_size=4)), max_size=8
).map("".join)
GROUPS = st.sampled_from(["alt.binaries.teevee", "alt.binaries.movies", "a.b.mp3", "a.b.misc"])


def by_re(name, group):
    for category, names, in_group in REFERENCE:
        if all(p.search(name) for p in names) and (in_group is None or in_group.search(group)):
            return category
    return OTHER


@pytest.mark.slow
@given(ASCII_NAMES, GROUPS)
def test_the_default_rules_decide_under_re2_as_they_did_under_re(name, group):
    assert CategoryRules().categorize(name, [group]) == by_re(name, group)


# --- a rule set stored before category rules ran under RE2 -------------------------


def publish_unchecked(categories):
    """A rule set version as one stored before the RE2 check: no validation at all."""
    rules = current_rules().to_dict()
    version = rules.pop("version") + 1
    RuleSetVersionFactory(
        version=version, rules=rules, categories=categories, created_by="before RE2"
    )
    forget_current_rules()
    return version


STORED = [
    {"category": 7020, "name": ["(?<=x)epub"]},  # refused by RE2 (a lookbehind)
    {"category": 7030, "name": ["(?i)cbz"]},
    {"category": 2000, "name": [r"(?i)movie\Z"]},  # ran under re, refused by RE2
]


@pytest.mark.django_db
class TestAStoredRuleThatRe2Refuses:
    def test_is_skipped_with_a_warning_and_the_others_stay_in_force(self, caplog):
        version = publish_unchecked(STORED)
        with caplog.at_level(logging.WARNING, logger="catalog.rulesets"):
            rules = category_rules(version)
        assert rules.categorize("xepub.cbz", []) == 7030
        assert rules.categorize("xepub", []) == OTHER
        assert rules.categorize("a.movie", []) == OTHER
        assert rules.source == STORED  # as stored: the form shows it
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 2
        assert all(f"Rule set v{version}: a category rule is skipped." in w for w in warnings)
        assert "categories[0].name" in warnings[0] and "categories[2].name" in warnings[1]

    def test_batches_and_recategorizing_go_on(self):
        publish_unchecked(STORED)
        group = GroupFactory(name="alt.binaries.misc")
        files = [
            report(f"Saga.Vol.11.cbz.part{i:02d}.rar", parts=[1], total=1, index=i, count=2)
            for i in (1, 2)
        ]
        assert store_files(group.id, None, [], files) == 2
        assert list(Release.objects.values_list("category", flat=True)) == [7030]
        out = StringIO()
        call_command("recategorize", stdout=out)
        assert "recategorized" in out.getvalue()

    def test_the_rule_set_form_shows_it_and_refuses_it_with_the_reason(self, admin_client):
        version = publish_unchecked(STORED)
        page = admin_client.get("/admin/catalog/rulesetversion/add/")
        assert page.status_code == 200
        assert "(?&lt;=x)epub" in page.content.decode()
        rules = current_rules().to_dict()
        rules.pop("version")
        response = admin_client.post(
            "/admin/catalog/rulesetversion/add/",
            {"rules": json.dumps(rules), "categories": json.dumps(STORED), "note": ""},
        )
        assert response.status_code == 200
        html = response.content.decode()
        assert "cannot run under RE2" in html and "linear in the name" in html
        assert RuleSetVersion.objects.order_by("-version").first().version == version
