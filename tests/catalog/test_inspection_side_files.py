"""Matching posted files to FileDescs when the par2 set covers only the volumes.

Found by the INN2 end-to-end test (tests/e2e/test_inspection_e2e.py): an
obfuscated movie posted as 7z volumes, an nfo and par2 (the par2 set over the
volumes only, as uploaders make it) got no <meta> mapping, because the nfo
made one file more than FileDescs and the order match gave up. A file that
fits no FileDesc's size is now left out of the order match (`_fits_any`).
"""

from __future__ import annotations

from catalog.inspection import CatalogFileSize, match_files, validate_report
from tests.catalog.test_inspection import REAL, VOLUME, par2_result, payload, sized

VOLUMES = ((f"{REAL}.7z.001", VOLUME), (f"{REAL}.7z.002", VOLUME), (f"{REAL}.7z.003", 92_546))


def test_an_nfo_outside_the_par2_set_does_not_stop_the_volumes_matching():
    report_ = validate_report(payload(par2_result(*VOLUMES)))
    files = [
        sized("b1c2d3.7z.001", VOLUME, 1),
        sized("b1c2d3.7z.002", VOLUME, 2),
        sized("b1c2d3.7z.003", 92_546, 3),
        sized("b1c2d3.nfo", 416, 4, segments=1),
        sized("b1c2d3.par2", 1_540, 5, segments=1),
    ]
    names, how = match_files(report_, files)
    assert names == {f"b1c2d3.7z.00{n}": f"{REAL}.7z.00{n}" for n in (1, 2, 3)}
    assert how == "0 by their yEnc size, 3 by size order"


def test_an_nfo_the_par2_set_covers_is_still_matched():
    report_ = validate_report(payload(par2_result(*VOLUMES, (f"{REAL}.nfo", 416))))
    files = [
        sized("b1c2d3.7z.001", VOLUME, 1),
        sized("b1c2d3.7z.002", VOLUME, 2),
        sized("b1c2d3.7z.003", 92_546, 3),
        CatalogFileSize("b1c2d3.nfo", 4, 1_100, 1),
    ]
    names, _ = match_files(report_, files)
    assert names["b1c2d3.nfo"] == f"{REAL}.nfo" and len(names) == 4
