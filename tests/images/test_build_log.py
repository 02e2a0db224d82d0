"""A build's log stays within the log cap: a requirement that prints without end cannot fill the disk or
the reader's memory; its last lines are still at hand for the failure's reason."""
from __future__ import annotations

from myapp.backends.logcaps import LogLimits
from myapp.images.logs import LogWriter, read_lines


def test_a_build_log_past_its_cap_says_so_and_drops_the_rest(tmp_path):
    limits = LogLimits(max_bytes=64 * 1024, max_line=1024)
    log = LogWriter(tmp_path / "1.log", limits)
    for i in range(20_000):
        log(f"Collecting package-{i}")
    assert (tmp_path / "1.log").stat().st_size <= limits.max_bytes
    lines = read_lines(tmp_path / "1.log")
    assert lines[0] == {"seq": 1, "line": "Collecting package-0"}
    assert lines[-1]["line"] == "[log cut: this build's log reached its cap of 65536 bytes; later lines are dropped]"
    assert log.dropped == 20_000 - len(lines) + 1 and len(log.lines) == 100
    assert log.tail(2) == "Collecting package-19998\nCollecting package-19999"
    again = LogWriter(tmp_path / "1.log", limits)  # the build tried again: its log was cut already
    again("one more")
    assert read_lines(tmp_path / "1.log") == lines
