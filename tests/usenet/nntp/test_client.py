"""NNTPClient against the in-repo server: commands, streaming, compression, errors."""

from __future__ import annotations

import zlib

import pytest

from tests.support.nntpd import NNTPServer, numbered_articles
from usenet.nntp.client import INFLATE_STEP, NNTPClient, unstuff
from usenet.nntp.errors import (
    AccessDenied,
    AuthRequired,
    BodyTooLarge,
    NNTPConnectionError,
    NNTPError,
    NNTPProtocolError,
    NoArticles,
    NoSuchGroup,
    ServiceDiscontinued,
    UnsafeArgument,
)


def expected_lines(server: NNTPServer, name: str, first: int, last: int) -> list[bytes]:
    return [a.overview(n) for n, a in server.groups[name].articles_in(first, last)]


def test_group_reports_count_and_water_marks(server, connect):
    server.add_group("alt.test", numbered_articles(100))
    info = connect().group("alt.test")
    assert (info.count, info.first, info.last, info.name) == (86, 1, 100, "alt.test")


def test_over_streams_dot_unstuffed_lines_of_present_articles(server, connect):
    server.add_group("alt.test", numbered_articles(300))
    client = connect()
    client.group("alt.test")
    lines = list(client.over(10, 60))
    assert lines == expected_lines(server, "alt.test", 10, 60)
    assert any(line.split(b"\t")[1].startswith(b".dotted") for line in lines)
    assert server.count("OVER") == 1 and server.count("XOVER") == 0


def test_open_ended_range_reads_to_the_end(server, connect):
    server.add_group("alt.test", numbered_articles(120))
    client = connect()
    client.group("alt.test")
    assert [int(line.split(b"\t")[0]) for line in client.over(110)] == [
        110,
        111,
        113,
        114,
        115,
        116,
        117,
        118,
        120,
    ]
    assert server.commands[-1] == "OVER 110-"


@pytest.mark.parametrize("offer", ["offer_deflate", "offer_gzip", "offer_xzver"])
def test_compressed_over_gives_the_same_lines_as_plain(server, connect, offer):
    server.add_group("alt.test", numbered_articles(2000))
    plain_client = connect(compression=False)
    plain_client.group("alt.test")
    plain = list(plain_client.over(1, 2000))
    setattr(server, offer, True)
    client = connect()
    client.group("alt.test")
    assert client.compression_in_use == {"offer_deflate": "deflate", "offer_gzip": "gzip"}.get(
        offer, "xzver"
    )
    assert list(client.over(1, 2000)) == plain
    assert len(plain) == 1715


def test_compression_setting_off_uses_plain_over(server, connect):
    server.offer_deflate = server.offer_gzip = server.offer_xzver = True
    server.add_group("alt.test", numbered_articles(10))
    client = connect(compression=False)
    client.group("alt.test")
    assert len(list(client.over(1, 10))) == 9
    assert client.compression_in_use is None
    assert server.count("COMPRESS") == server.count("XFEATURE") == server.count("XZVER") == 0


def test_xover_is_used_when_over_is_not_advertised(connect):
    with NNTPServer(advertise_over=False) as old_server:
        old_server.add_group("alt.test", numbered_articles(20))
        client = NNTPClient(old_server.host, old_server.port, timeout=5).connect()
        client.group("alt.test")
        assert len(list(client.over(1, 20))) == 18
        assert old_server.count("XOVER") == 1 and old_server.count("OVER") == 0
        client.quit()


def test_server_without_capabilities_still_works_with_xover():
    with NNTPServer(capabilities_supported=False) as old_server:
        old_server.add_group("alt.test", numbered_articles(20))
        with NNTPClient(old_server.host, old_server.port, timeout=5) as client:
            client.group("alt.test")
            assert len(list(client.over(1, 20))) == 18
        assert old_server.count("XOVER") == 1


def test_over_yields_the_first_line_before_the_server_sent_the_last(server, connect):
    server.add_group("alt.test", numbered_articles(100))
    client = connect()
    client.group("alt.test")
    server.hold_after_lines = 3
    lines = client.over(1, 100)
    # The server is holding back everything after line 3 until released.
    first = next(lines)
    assert first.startswith(b"1\t")
    server.release.set()
    assert len([first, *lines]) == 86


def test_abandoning_a_stream_closes_the_connection(server, connect):
    server.add_group("alt.test", numbered_articles(500))
    client = connect()
    client.group("alt.test")
    lines = client.over(1, 500)
    next(lines)
    lines.close()
    assert not client.connected


def test_a_command_during_an_unfinished_stream_is_refused(server, connect):
    server.add_group("alt.test", numbered_articles(50))
    client = connect()
    client.group("alt.test")
    lines = client.over(1, 50)
    next(lines)
    with pytest.raises(NNTPError, match="still being read"):
        client.date()


@pytest.mark.slow
def test_slow_server_raises_connection_error_after_the_read_timeout(server, connect):
    server.add_group("alt.test", numbered_articles(10))
    client = connect(timeout=0.3)
    server.reply_delay = 2.0
    with pytest.raises(NNTPConnectionError, match="sent nothing"):
        client.group("alt.test")
    assert not client.connected


def test_connection_dropped_mid_over_raises_connection_error(server, connect):
    server.add_group("alt.test", numbered_articles(1000))
    server.drop_after_lines = 100
    client = connect()
    client.group("alt.test")
    received = []
    with pytest.raises(NNTPConnectionError, match="closed"):
        for line in client.over(1, 1000):
            received.append(line)
    assert len(received) == 100
    assert not client.connected


def test_refused_connection_raises_connection_error():
    with NNTPServer() as stopped:
        port = stopped.port
    with pytest.raises(NNTPConnectionError, match="cannot connect"):
        NNTPClient("127.0.0.1", port, connect_timeout=2).connect()


@pytest.mark.parametrize(
    ("verb", "code", "error"),
    [
        ("GROUP", 411, NoSuchGroup),
        ("GROUP", 480, AuthRequired),
        ("GROUP", 502, AccessDenied),
        ("GROUP", 400, ServiceDiscontinued),
        ("OVER", 423, NoArticles),
        ("OVER", 420, NoArticles),
        ("DATE", 502, AccessDenied),
    ],
)
def test_error_replies_raise_typed_errors(server, connect, verb, code, error):
    server.add_group("alt.test", numbered_articles(10))
    client = connect()
    if verb == "OVER":
        client.group("alt.test")
    server.forced_replies[verb] = (code, "forced by the test")
    with pytest.raises(error) as raised:
        if verb == "GROUP":
            client.group("alt.test")
        elif verb == "OVER":
            list(client.over(1, 10))
        else:
            client.date()
    assert raised.value.code == code
    assert raised.value.message == "forced by the test"


ARABIC_ONE, ARABIC_ZERO = "\u0661", "\u0660"  # isdigit(), and int() reads them


@pytest.mark.parametrize(
    ("verb", "reply"),
    [
        ("GROUP", (211, f"{ARABIC_ONE} {ARABIC_ONE} {ARABIC_ONE}{ARABIC_ZERO} alt.test")),
        ("GROUP", (211, "1 1 " + "9" * 5000 + " alt.test")),
        ("DATE", (111, "²" * 14)),
        ("DATE", (111, "2024" + ARABIC_ONE * 10)),
        ("GROUP", ("²²²", "a status line in other digits")),
    ],
)
def test_a_reply_in_other_digits_is_a_protocol_error(server, connect, verb, reply):
    server.add_group("alt.test", numbered_articles(10))
    client = connect()
    server.forced_replies[verb] = reply
    with pytest.raises(NNTPProtocolError):
        client.group("alt.test") if verb == "GROUP" else client.date()


def test_a_list_active_line_in_other_digits_is_a_protocol_error(server, connect):
    server.add_group("alt.test", numbered_articles(10))
    server.groups["alt.test"].water_marks = lambda: (9, "²", ARABIC_ONE)
    with pytest.raises(NNTPProtocolError):
        list(connect().list_active())


def test_missing_group_and_empty_range_are_typed(server, connect):
    server.add_group("alt.test", numbered_articles(10))
    client = connect()
    with pytest.raises(NoSuchGroup):
        client.group("alt.nothing")
    client.group("alt.test")
    with pytest.raises(NoArticles):
        list(client.over(500, 600))
    # The connection stays usable after an error reply.
    assert len(list(client.over(1, 3))) == 3


@pytest.mark.parametrize(("code", "error"), [(400, ServiceDiscontinued), (502, AccessDenied)])
def test_greeting_refusal_raises_typed_error(server, code, error):
    server.greeting = (code, "no service for you")
    client = NNTPClient(server.host, server.port, timeout=5)
    with pytest.raises(error):
        client.connect()
    assert not client.connected


def test_authentication_with_url_style_credentials():
    with NNTPServer(users={"reader": "s3cret:p@ss"}, require_auth=True) as auth_server:
        auth_server.add_group("alt.test", numbered_articles(10))
        with NNTPClient(
            auth_server.host, auth_server.port, username="reader", password="s3cret:p@ss"
        ) as client:
            assert client.group("alt.test").count == 9
        assert "AUTHINFO PASS ***" in auth_server.commands


def test_wrong_password_raises_auth_error_without_the_password():
    with NNTPServer(users={"reader": "right"}, require_auth=True) as auth_server:
        client = NNTPClient(
            auth_server.host, auth_server.port, username="reader", password="wrong-hunter2"
        )
        with pytest.raises(AuthRequired) as raised:
            client.connect()
        assert raised.value.code == 481
        assert "wrong-hunter2" not in str(raised.value)
        assert "wrong-hunter2" not in repr(raised.value)


def test_auth_required_without_credentials_is_typed():
    with NNTPServer(users={"reader": "right"}, require_auth=True) as auth_server:
        auth_server.add_group("alt.test", numbered_articles(10))
        with NNTPClient(auth_server.host, auth_server.port) as client:
            with pytest.raises(AuthRequired):
                client.group("alt.test")


def test_mode_reader_is_sent_only_to_mode_switching_servers(server, connect):
    connect()
    assert server.count("MODE") == 0
    with NNTPServer(mode_reader_needed=True) as switching:
        switching.add_group("alt.test", numbered_articles(10))
        with NNTPClient(switching.host, switching.port) as client:
            client.group("alt.test")
            assert len(list(client.over(1, 10))) == 9
        assert switching.count("MODE") == 1
        assert switching.count("OVER") == 1


def test_list_active_with_wildmat(server, connect):
    server.add_group("alt.binaries.a", numbered_articles(10))
    server.add_group("alt.binaries.b", numbered_articles(20))
    server.add_group("comp.lang.python", numbered_articles(30))
    client = connect()
    assert sorted(client.list_active("alt.binaries.*,!*.b")) == [("alt.binaries.a", 10, 1, "y")]
    assert {name for name, *_ in client.list_active()} == {
        "alt.binaries.a",
        "alt.binaries.b",
        "comp.lang.python",
    }


def test_date_returns_the_server_clock(server, connect):
    server.clock = lambda: 1136214245.0
    assert connect().date() == 1136214245


def test_quit_says_goodbye_and_closes(server, connect):
    client = connect()
    client.quit()
    assert not client.connected
    assert server.commands[-1] == "QUIT"


@pytest.mark.parametrize("offer", ["offer_deflate", "offer_gzip", "offer_xzver"])
def test_corrupt_compressed_over_falls_back_to_plain_on_a_new_connection(server, offer):
    server.add_group("alt.test", numbered_articles(300))
    setattr(server, offer, True)
    server.corrupt_compression = True
    with NNTPClient(server.host, server.port, timeout=5) as client:
        client.group("alt.test")
        lines = list(client.over(1, 300))
        assert lines == expected_lines(server, "alt.test", 1, 300)
        assert client.compression_in_use is None
        assert client.disabled_compressions == {offer.removeprefix("offer_")}
        # Remembered: the next overview goes straight to plain OVER.
        before = server.connections
        assert len(list(client.over(1, 10))) == 9
        assert server.connections == before
    assert server.connections == 2
    assert server.commands[-2] == "OVER 1-10"


def test_deflate_failure_mid_stream_resumes_after_the_last_good_line(server):
    server.add_group("alt.test", numbered_articles(300))
    server.offer_deflate = True
    server.corrupt_compression = True
    server.corrupt_after_lines = 40
    with NNTPClient(server.host, server.port, timeout=5) as client:
        client.group("alt.test")
        lines = list(client.over(1, 300))
    assert lines == expected_lines(server, "alt.test", 1, 300)
    # 40 present articles end at number 46 (every 7th is a hole).
    assert "OVER 47-300" in server.commands


@pytest.mark.parametrize("argument", ["alt.x\r\nQUIT", "alt.x\nQUIT", "alt.x\x00"])
def test_a_command_argument_holding_cr_lf_or_nul_is_refused_before_sending(
    server, connect, argument
):
    server.add_group("alt.test", numbered_articles(10))
    client = connect()
    with pytest.raises(UnsafeArgument, match="CR, LF or NUL"):
        client.group(argument)
    with pytest.raises(UnsafeArgument):
        list(client.list_active(argument))
    # Nothing was sent: the session goes on.
    assert client.group("alt.test").last == 10


def test_group_keeps_its_high_water_mark_until_the_connection_closes(server, connect):
    server.add_group("alt.test", numbered_articles(100))
    client = connect()
    assert client.group_last is None
    client.group("alt.test")
    assert client.group_last == 100
    client.close()
    assert client.group_last is None


# BODY looks only at the tail of what has arrived for the terminator: these bodies put
# dot-stuffed lines, the terminator and line ends at the edges of the server's writes.
DOTTED_BODY = (
    b".the first line starts with a dot\r\n"
    + b"".join(b"%05d" % n + b"y" * 1000 + b"\r\n" for n in range(300))
    + b"..two dots\r\n"
    + b".\r\n"  # a line that is one dot: ".." on the wire, not the terminator
    + b"plain\r\n"
    + b".x\r\n"
)


@pytest.mark.parametrize("line_delay", [0.0, 0.001])
def test_body_is_the_article_dot_unstuffed_wherever_the_reads_split_it(server, connect, line_delay):
    server.bodies["<dots@x>"] = DOTTED_BODY
    server.bodies["<empty@x>"] = b""
    server.bodies["<one@x>"] = b".\r\n"  # one line that is a lone dot, stuffed on the wire
    server.line_delay = line_delay  # one write per line: every line is a read of its own
    client = connect(compression=False)
    assert client.body("<dots@x>", len(DOTTED_BODY)) == DOTTED_BODY
    assert client.body("<empty@x>", 10) == b""
    assert client.body("<one@x>", 10) == b".\r\n"
    assert client.body("<dots@x>", len(DOTTED_BODY)) == DOTTED_BODY  # still in step


def test_a_stuffed_body_is_the_wire_form_and_unstuff_gives_the_article(server, connect):
    server.bodies["<dots@x>"] = DOTTED_BODY
    server.bodies["<one@x>"] = b".\r\n"
    client = connect(compression=False)
    wire = client.body("<dots@x>", 2 * len(DOTTED_BODY), stuffed=True)
    assert wire.startswith(b"..the first line") and b"\r\n...two dots\r\n..\r\n" in wire
    assert unstuff(wire) == DOTTED_BODY
    assert client.body("<one@x>", 10, stuffed=True) == b"..\r\n"
    with pytest.raises(BodyTooLarge):  # bounded as on the wire
        client.body("<dots@x>", len(DOTTED_BODY) + 1, stuffed=True)
    assert not client.connected


def test_a_body_over_its_bound_costs_the_connection_not_the_memory(server, connect):
    server.bodies["<dots@x>"] = DOTTED_BODY
    client = connect(compression=False)
    with pytest.raises(BodyTooLarge):
        client.body("<dots@x>", len(DOTTED_BODY) - 1)
    assert not client.connected


def test_body_through_compress_deflate_is_the_same():
    with NNTPServer(offer_deflate=True) as server:
        server.bodies["<dots@x>"] = DOTTED_BODY
        with NNTPClient(server.host, server.port, timeout=5) as client:
            assert client.compression_in_use == "deflate"
            assert client.body("<dots@x>", len(DOTTED_BODY)) == DOTTED_BODY


def test_one_read_of_compressed_zeros_inflates_a_step_at_a_time(server, connect):
    """50 MB of zeros deflate to about 50 KB: one read of them grows the buffer by
    INFLATE_STEP a fill, not by 50 MB at once (the callers' bounds stop it there)."""
    packer = zlib.compressobj(wbits=-15)
    bomb = packer.compress(b"\0" * 50_000_000) + packer.flush(zlib.Z_SYNC_FLUSH)
    assert len(bomb) < 100_000
    client = connect(compression=False)
    client._inflater = zlib.decompressobj(-15)  # as after COMPRESS DEFLATE
    reads = [bomb]
    client._recv = lambda: reads.pop()  # type: ignore[method-assign]
    client._fill()
    assert len(client._buffer) == INFLATE_STEP and reads == []
    for _ in range(3):  # the rest of that read, before the socket is read again
        client._fill()
    assert len(client._buffer) == 4 * INFLATE_STEP


def test_a_compressed_body_larger_than_a_step_reads_whole():
    body = b".a first line\r\n" + (b"z" * 1022 + b"\r\n") * 5_000  # five steps
    with NNTPServer(offer_deflate=True) as server:
        server.bodies["<big@x>"] = body
        with NNTPClient(server.host, server.port, timeout=5) as client:
            assert client.body("<big@x>", len(body)) == body
            assert client.body("<big@x>", len(body)) == body  # still in step


@pytest.mark.parametrize("size", range(1, 14))
def test_body_reads_split_anywhere_give_the_same_bytes(size):
    """The wire cut into reads of `size` bytes: every line end, stuffed dot and the
    terminator falls across a read's edge for some size."""
    article = b".a\r\n..\r\nb.c\r\n.\r\n\r\nd\r\n"
    wire = b"..a\r\n...\r\nb.c\r\n..\r\n\r\nd\r\n.\r\n"
    reads = [wire[at : at + size] for at in range(0, len(wire), size)]
    client = NNTPClient("127.0.0.1", 1)

    def fill() -> None:
        client._buffer += reads.pop(0)

    assert unstuff(client._read_body(fill, len(wire), "<a@b>")) == article
    assert not reads and not client._buffer
