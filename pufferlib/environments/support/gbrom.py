"""A tiny Game Boy ROM of our own: a valid 32 KB ROM-only cartridge that draws a scrolling checkerboard.

Why: Pokémon Red cannot ship, yet the pokemon_red binding (PyBoy, the ROM lookup, buttons, frames,
RAM reads, seeding) must run end to end in the tests and the matrix. This cartridge passes the
checks a real one does (the Nintendo logo at 0x104, the header checksum at 0x14D, the global
checksum at 0x14E) and its program makes frames that are not blank and that actions change:

- it turns the LCD off, writes two tiles (blank, solid) and a 32x32 checkerboard tile map, sets the
  palette and turns the LCD on with the background enabled;
- every frame (it polls LY for the vertical blank) it increments SCX (the background scrolls left)
  and stores it at 0xC000 in work RAM, and adds the held A/B/Select/Start buttons (1/2/4/8) to SCY,
  so pressing a button scrolls the picture down.

It proves the binding, not the game: nothing of Pokémon Red runs on it.
"""

from __future__ import annotations

from pathlib import Path

ROM_SIZE = 0x8000  # 32 KB, cartridge type 0 (ROM only), no banks
TITLE = b"PUFFERTANK"
FRAME_COUNTER = 0xC000  # the work-RAM byte the program writes every frame (SCX)
# The logo bitmap every cartridge carries at 0x104; the boot ROM refuses a cartridge without it.
LOGO = bytes.fromhex(
    "CEED6666CC0D000B03730083000C000D0008111F8889000EDCCC6EE6DDDDD999BBBB67636E0EECCCDDDC999FBBB9333E"
)
_WAIT_VBLANK = "F044 FE90 20FA"  # ldh a,[LY]; cp 144; jr nz,-6
PROGRAM = bytes.fromhex(
    "".join(
        (
            "F3 31FEFF",  # di; ld sp,$FFFE
            _WAIT_VBLANK,
            "AF E040",  # xor a; ldh [LCDC],a  (LCD off: VRAM is free to write)
            "210080 0610 AF 22 05 20FC",  # tile 0 ($8000-$800F): zeros
            "211080 0610 3EFF 22 05 20FC",  # tile 1 ($8010-$801F): $FF (colour 3)
            "210098 0E00",  # hl = $9800 (the background map); c = row 0
            "0600",  # .row: b = column 0
            "78 A9 E601 22 04 78 FE20 20F5",  # .col: [hl+] = (b ^ c) & 1; b++; until b == 32
            "0C 79 FE20 20ED",  # c++; until c == 32 (back to .row)
            "3EE4 E047",  # ld a,$E4; ldh [BGP],a  (palette 3-2-1-0)
            "AF E042 E043",  # SCY = SCX = 0
            "3E91 E040",  # ld a,$91; ldh [LCDC],a  (LCD on, background on, tiles at $8000)
            _WAIT_VBLANK,  # .main
            "F043 3C E043 EA00C0",  # SCX++; [$C000] = SCX
            "3E10 E000 F000 F000 2F E60F 47",  # b = the held action buttons (P1 with P15 low, inverted)
            "F042 80 E042",  # SCY += b
            "F044 FE90 28FA",  # wait until LY leaves line 144 (one step per frame)
            "18D9",  # jr .main
        )
    ).replace(" ", "")
)


def header_checksum(rom: bytes | bytearray) -> int:
    """The byte at 0x14D: the boot ROM's check over the header bytes 0x134-0x14C."""
    x = 0
    for byte in rom[0x134:0x14D]:
        x = (x - byte - 1) & 0xFF
    return x


def global_checksum(rom: bytes | bytearray) -> int:
    """The big-endian word at 0x14E: the sum of every byte but those two (not checked by hardware)."""
    return (sum(rom) - rom[0x14E] - rom[0x14F]) & 0xFFFF


def build() -> bytes:
    """The cartridge's 32 KB."""
    rom = bytearray(ROM_SIZE)
    rom[0x100:0x104] = bytes.fromhex("00C35001")  # entry: nop; jp $0150
    rom[0x104:0x134] = LOGO
    rom[0x134 : 0x134 + len(TITLE)] = TITLE
    rom[0x14A] = 0x01  # destination: overseas (cartridge type, ROM and RAM size stay 0)
    rom[0x150 : 0x150 + len(PROGRAM)] = PROGRAM
    rom[0x14D] = header_checksum(rom)
    rom[0x14E:0x150] = global_checksum(rom).to_bytes(2, "big")
    return bytes(rom)


def problems(rom: bytes) -> list[str]:
    """What makes `rom` not a Game Boy cartridge the boot ROM accepts (empty when it is one)."""
    if len(rom) < ROM_SIZE or len(rom) % 0x4000:
        return [f"{len(rom)} bytes (a cartridge is a multiple of 16 KB, at least 32 KB)"]
    found = []
    if rom[0x104:0x134] != LOGO:
        found.append("no Nintendo logo at 0x104")
    if rom[0x14D] != header_checksum(rom):
        found.append(f"header checksum 0x{rom[0x14D]:02X} at 0x14D, expected 0x{header_checksum(rom):02X}")
    return found


def title(rom: bytes) -> str:
    """The cartridge title from its header (0x134-0x143, zero-padded ASCII)."""
    return rom[0x134:0x144].split(b"\0", 1)[0].decode("ascii", "replace").strip()


def write(path: str | Path) -> Path:
    """Write the cartridge to `path` (its parent folders made) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(build())
    return path
