"""End to end (issue 26): obfuscated releases posted to INN2 are named by the fleet.

Six real releases (tests/support/obfuscated.py: a movie in 7z volumes with
par2 and an nfo, a TV episode with par2 only, a passworded 7z with encrypted
headers, a bare 7z set with neither par2 nor nfo, zip volumes named only by
their first local header, and a control under its real name) are posted under random subjects and file names. A range-mode agent
indexes the group; the catalog then lists them under their random names. The
coordinator plans their inspection, and inspect-mode agents read their par2,
nfo and first archive articles:

- the first inspecting agent reads INN2 through a proxy that holds every BODY
  answer, so it sits in the middle of its lease until it is killed with
  SIGKILL; a second agent takes that lease over after the TTL and inspects
  everything;
- then `t=search` finds each release by its real name and category, the
  passworded one only with `password=1`, the bare one keeps its posted name
  and the coordinator says why, and nzbget downloads the movie by `t=get` and
  gets the posted bytes back.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from xml.etree import ElementTree

import pytest

from tests.chaos.proxy import LoopbackProxy
from tests.e2e.test_fleet import wait_until_all_done
from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.fleet import Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.net import free_port
from tests.support.obfuscated import Release, make_posts, tool

pytestmark = [pytest.mark.slow, pytest.mark.inn, pytest.mark.e2e]

GROUP = "alt.binaries.e2e.inspect"
NEWZNAB = "{http://www.newznab.com/DTD/2010/feeds/attributes/}"
NZB = "{http://www.newzbin.com/DTD/2003/nzb}"
INSPECT_TIMEOUT = 120


class BodyHolder(LoopbackProxy):
    """A proxy to INN2 that forwards everything until a client sends BODY, then holds.

    The answer to that BODY (and everything after it on that connection) is
    never forwarded, so an agent reading through it stays in the middle of its
    lease, heartbeating, until it is killed. `bodies` counts the BODY commands.
    """

    scheme = "nntp"

    def __init__(self, upstream: tuple[str, int]) -> None:
        super().__init__(upstream, plan=None)
        self.bodies = 0

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection(*self.upstream)
        holding = asyncio.Event()

        async def commands() -> None:
            while data := await client_r.read(65536):
                if any(line.upper().startswith(b"BODY") for line in data.split(b"\n")):
                    self.bodies += 1
                    holding.set()
                server_w.write(data)
                await server_w.drain()

        async def answers() -> None:
            while data := await server_r.read(65536):
                if holding.is_set():
                    await asyncio.Event().wait()  # hold this connection until the end
                client_w.write(data)
                await client_w.drain()

        tasks = [asyncio.ensure_future(commands()), asyncio.ensure_future(answers())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for writer in (client_w, server_w):
                writer.close()


@dataclass
class Run:
    fleet: Fleet
    inn: InnServer
    releases: dict[str, Release]  # by kind
    key: str  # a newznab API key
    before: dict[str, list[str]]  # kind -> titles t=search gave for the real name before
    victim_lease: tuple[int, int, int]  # (inspection id, release id, epoch) the victim held
    workdir: Path

    def newznab(self, **params: str) -> bytes:
        query = urlencode({**params, "apikey": self.key})
        with urllib.request.urlopen(f"{self.fleet.url}/api?{query}", timeout=30) as response:
            return response.read()

    def search(self, release: Release, **params: str) -> list[dict[str, Any]]:
        """The items t=search answers for the words of the release's real name."""
        words = release.real_name.replace("-", ".").split(".")
        feed = ElementTree.fromstring(self.newznab(t="search", q=" ".join(words), **params))
        return [
            {
                "title": item.findtext("title"),
                "guid": item.findtext("guid"),
                "attrs": [(a.get("name"), a.get("value")) for a in item.iter(f"{NEWZNAB}attr")],
            }
            for item in feed.findall("channel/item")
        ]

    def release_row(self, release: Release) -> dict[str, Any]:
        """The catalog's row of the release, found by the posted name of its first file."""
        rows = self.fleet.sql(
            "SELECT r.id, r.name, r.category, r.posted_name, r.passworded, r.encrypted, "
            "r.imdb_id, i.status, i.epoch, i.outcome "
            "FROM catalog_release r LEFT JOIN inspection i ON i.release_id = r.id "
            "WHERE r.id = (SELECT f.release_id FROM catalog_file f WHERE f.name = %s)",
            (release.files[0].posted_name,),
        )
        assert len(rows) == 1, f"{release.kind}: no release holds its first segment"
        keys = (
            "id name category posted_name passworded encrypted imdb_id status epoch outcome"
        ).split()
        return dict(zip(keys, rows[0], strict=True))


def plan_inspections(fleet: Fleet) -> None:
    fleet.manage("plan_inspections")


def wait_until_inspected(fleet: Fleet, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = fleet.sql("SELECT status, count(*) FROM inspection GROUP BY status")
        counts = dict(rows)
        if counts and set(counts) == {"done"}:
            return
        time.sleep(0.5)
    rows = fleet.sql("SELECT id, release_id, status, epoch, attempts, error FROM inspection")
    raise AssertionError(
        f"inspections not done: {rows}\n"
        + "\n".join(f"== {n}\n{fleet.log(n + '.log')}" for n in fleet.agents)
    )


def wait_for_lease(fleet: Fleet, node: str, timeout: float) -> tuple[int, int, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = fleet.sql(
            "SELECT i.id, i.release_id, i.epoch FROM inspection i "
            "JOIN seed_node n ON n.id = i.node_id WHERE i.status = 'leased' AND n.name = %s",
            (node,),
        )
        if rows:
            return rows[0]
        assert fleet.agents[node].poll() is None, fleet.log(node + ".log")
        time.sleep(0.2)
    raise AssertionError(f"{node} took no inspection lease:\n{fleet.log(node + '.log')}")


@pytest.fixture(scope="module")
def run(
    inn_server: InnServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Run]:
    workdir = tmp_path_factory.mktemp("inspection")
    articles, made = make_posts(workdir / "made", GROUP)
    inn_server.create_group(GROUP)
    posted = inn_server.post_articles(None, articles)
    assert not posted.refused and posted.accepted == len(articles)
    releases = {release.kind: release for release in made}

    with fresh_database() as (url, conninfo):
        fleet = Fleet(url, conninfo, workdir, news_server_url=inn_server.url)
        try:
            fleet.start()
            fleet.plan([GROUP], 1, 500)
            fleet.start_agent("indexer", "--mode", "ranges", "--news-server", inn_server.url)
            wait_until_all_done(fleet, timeout=120)
            assert fleet.stop_agent("indexer") == 0
            key = fleet.python(
                "from newznab.services import issue_api_key\nprint(issue_api_key('e2e')[1])\n"
            ).strip()
            run = Run(fleet, inn_server, releases, key, {}, (0, 0, 0), workdir)
            # Before inspection the real names are nowhere in the catalog.
            run.before = {
                kind: [item["title"] for item in run.search(release, password="1")]
                for kind, release in releases.items()
            }

            plan_inspections(fleet)
            holder = BodyHolder((inn_server.host, inn_server.port))
            with holder.running():
                # Uncompressed, so the holder sees the agent's commands.
                held = f"{holder.url}/?compression=0"
                fleet.start_agent("victim", "--mode", "inspect", "--news-server", held)
                run.victim_lease = wait_for_lease(fleet, "victim", timeout=60)
                deadline = time.monotonic() + 30
                while holder.bodies == 0 and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert holder.bodies, "the victim leased but never asked for a body"
                fleet.agents["victim"].send_signal(signal.SIGKILL)
                fleet.agents["victim"].wait(10)
            fleet.start_agent("survivor", "--mode", "inspect", "--news-server", inn_server.url)
            wait_until_inspected(fleet, INSPECT_TIMEOUT)
            yield run
        finally:
            fleet.stop()


def test_before_inspection_no_obfuscated_release_is_found_by_its_real_name(run: Run) -> None:
    for kind, release in run.releases.items():
        expected = [release.real_name] if not release.obfuscated else []
        assert run.before[kind] == expected, kind


def test_every_release_named_inside_is_found_by_its_real_name_and_category(run: Run) -> None:
    for kind, release in run.releases.items():
        if not release.named_inside:
            continue
        items = run.search(release, password="1")
        assert [item["title"] for item in items] == [release.real_name], kind
        categories = {value for name, value in items[0]["attrs"] if name == "category"}
        assert str(release.category) in categories, (kind, categories)
        row = run.release_row(release)
        assert row["name"] == release.real_name and row["category"] == release.category
        if release.obfuscated:
            assert row["posted_name"] == release.posted_name, kind
    assert run.release_row(run.releases["movie"])["imdb_id"] == run.releases["movie"].imdb_id


def test_a_release_with_neither_par2_nor_archive_names_keeps_its_posted_name_and_says_why(
    run: Run,
) -> None:
    bare = run.releases["bare"]
    row = run.release_row(bare)
    assert row["status"] == "done"
    assert row["name"] == bare.posted_name and row["posted_name"] is None
    assert row["category"] == bare.category  # Other/Misc: nothing to recategorise it by
    why = (row["outcome"] or {}).get("why") or ""
    assert "par2" in why and len(why) > 20, why
    assert run.search(bare, password="1") == []
    # Where an operator looks: the release's page in the admin says it too.
    page = run.fleet.admin_session().get(f"/admin/catalog/release/{row['id']}/change/")
    assert html.escape(why, quote=True) in page or why in page, why


def test_the_passworded_release_is_flagged_and_hidden_unless_password_1(run: Run) -> None:
    locked = run.releases["passworded"]
    row = run.release_row(locked)
    assert row["passworded"] is True and row["name"] == locked.real_name
    assert row["encrypted"] is True  # made with -mhe=on: its headers are encrypted
    assert run.search(locked) == []
    assert [item["title"] for item in run.search(locked, password="1")] == [locked.real_name]
    for kind in ("movie", "episode", "zipped", "control"):
        other = run.release_row(run.releases[kind])
        assert (other["passworded"], other["encrypted"]) == (False, False), kind
        assert [i["title"] for i in run.search(run.releases[kind])] == [
            run.releases[kind].real_name
        ]


def test_the_killed_agent_s_inspection_lease_is_taken_over_and_finished(run: Run) -> None:
    inspection, release_id, epoch = run.victim_lease
    rows = run.fleet.sql(
        "SELECT i.status, i.epoch, n.name FROM inspection i "
        "LEFT JOIN seed_node n ON n.id = i.node_id WHERE i.id = %s",
        (inspection,),
    )
    assert rows, "the victim's inspection row is gone"
    status, final_epoch, node = rows[0]
    assert status == "done" and final_epoch > epoch and node == "survivor", rows
    (name,) = run.fleet.sql("SELECT name FROM catalog_release WHERE id = %s", (release_id,))[0]
    assert name in {r.expected_name for r in run.releases.values()}


def test_nzbget_downloads_the_movie_by_t_get_and_gets_the_posted_bytes(run: Run) -> None:
    movie = run.releases["movie"]
    (item,) = run.search(movie)
    nzb = run.workdir / "movie.nzb"
    nzb.write_bytes(run.newznab(t="get", id=item["guid"]))
    document = ElementTree.fromstring(nzb.read_bytes())
    metas = [(m.get("type"), m.text) for m in document.iter(f"{NZB}meta")]
    assert ("name", movie.real_name) in metas
    # The posted names map to the real ones in <meta>; the subjects stay as posted.
    assert {(f.posted_name, f.real_name) for f in movie.files if ".7z." in f.real_name} <= {
        tuple(text.split(" => ")) for kind, text in metas if kind == "x-real-name"
    }
    subjects = [f.get("subject") for f in document.iter(f"{NZB}file")]
    assert {f.posted_name for f in movie.files} == {s.split('"')[1] for s in subjects}
    downloads = run.workdir / "nzbget"
    options = {
        "MainDir": downloads,
        "DestDir": downloads / "dst",
        "InterDir": downloads / "inter",
        "NzbDir": downloads / "nzb",
        "QueueDir": downloads / "queue",
        "TempDir": downloads / "tmp",
        "LogFile": downloads / "nzbget.log",
        "LockFile": downloads / "nzbget.lock",
        "WebDir": "",
        "ConfigTemplate": "",
        "ControlIP": "127.0.0.1",
        "ControlPort": free_port(),
        "Server1.Active": "yes",
        "Server1.Host": run.inn.host,
        "Server1.Port": run.inn.port,
        "Server1.Connections": 2,
        "ParCheck": "auto",
        "ParRename": "yes",
        "Unpack": "no",
        "OutputMode": "log",
    }
    argv = [tool("nzbget"), "-n"]
    for name, value in options.items():
        argv += ["-o", f"{name}={value}"]
    done = subprocess.run([*argv, str(nzb)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    got = {
        hashlib.sha256(path.read_bytes()).hexdigest(): path.name
        for path in (downloads / "dst").rglob("*")
        if path.is_file()
    }
    # Every file but the recovery volume, which nzbget leaves paused when no repair is needed.
    for posted in movie.files:
        if ".vol" in posted.real_name:
            continue
        digest = hashlib.sha256(posted.data).hexdigest()
        assert digest in got, f"{posted.posted_name} ({posted.real_name}) not downloaded: {got}"
    # nzbget's par-rename gives the volumes their real names from the par2 set.
    volumes = [f for f in movie.files if ".7z." in f.real_name]
    assert {got[hashlib.sha256(f.data).hexdigest()] for f in volumes} == {
        f.real_name for f in volumes
    }
