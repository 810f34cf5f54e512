"""The matrix reads a container's output in chunks, not lines: Docker splits a line past 16 KB (a render
result carrying its thumbnails) and a chunk can end inside a UTF-8 character. Each result line must still
be parsed whole, exactly once."""

from __future__ import annotations

from pufferlib.matrix_protocol import Result
from pufferlib.tank.matrix.binding import Output


class Chunks:
    def __init__(self, data: bytes, size: int) -> None:
        self.pieces = [data[i : i + size] for i in range(0, len(data), size)]

    def logs(self, **_):
        return iter(self.pieces)


def test_long_lines_split_across_chunks_are_parsed_whole():
    big = Result("test/frames", "render", "pass", 1.0, "drawn — ok", images=["A" * 9000] * 4)
    small = Result("test/frames", "reset", "pass", 0.1, "1 live agent")
    data = (small.to_line() + "\nsome log line é\n" + big.to_line() + "\n" + small.to_line()).encode()
    assert len(big.to_line()) > 16_384
    for size in (7, 1000, 16_384):  # 7: chunks end inside the multi-byte characters too
        cells = []
        out = Output(Chunks(data, size), "test/frames", "local", cells.append)
        out._read()
        assert [c.check for c in cells] == ["reset", "render"], size  # each check once
        assert cells[1].images == big.images and cells[1].detail == "drawn — ok"
        assert "some log line é" in out.lines and len(out.lines) == 4
