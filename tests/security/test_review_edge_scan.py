"""Review of the HTTP edge: forms of a backtracking pattern the source scan misses."""

from __future__ import annotations

import pytest

from tests.security.test_linear_patterns import re_calls


@pytest.mark.parametrize(
    "source",
    [
        # the third-party `regex` module backtracks as `re` does
        "import regex\nA = regex.compile(r'(a+)+$')\n",
        # a pattern built at run time, compiled without a call the scan sees
        "import re\nRULES = list(map(re.compile, rule_texts))\n",
        "import re\nfrom functools import partial\nstem = partial(re.sub, r'(\\.\\w+)+$', '')\n",
        # a star import brings compile() in under its bare name
        "from re import *\nA = compile(r'(a+)+$')\n",
        # re reached without an import statement the scan reads
        "import importlib\nr = importlib.import_module('re')\nA = r.compile(r'(a+)+$')\n",
    ],
)
def test_the_scan_sees_every_way_a_backtracking_pattern_is_compiled(source):
    assert re_calls(source), "the scan reports nothing for this module"
