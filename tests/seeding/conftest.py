"""Planning's tests read an in-repo NNTP server (tests/support/news.py) and INN2."""

from tests.support.fixtures import inn_reader, inn_server  # noqa: F401  (fixtures)
from tests.support.news import news, news_group  # noqa: F401  (fixtures)
