"""Builds the web client's bundled fonts: Noto Sans Gujarati and Noto Sans Armenian (SIL Open
Font License 1.1), regular and bold, cut to their script's characters and written as woff2
into service/static/app/fonts (committed; app.css loads them with `unicode-range`, so a page
without Gujarati or Armenian text fetches neither).

    .venv/bin/python clients/web/fonts/subset.py [DIRECTORY OF THE NOTO TTFs]

The TTFs come from Debian's fonts-noto-core (default /usr/share/fonts/truetype/noto); the
build needs fontTools and brotli (the dev extras). Nothing here runs when the service runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "service" / "static" / "app" / "fonts"
NOTO = Path("/usr/share/fonts/truetype/noto")
# each script's block, with what shaping it needs (joiners, the dotted circle) and, for
# Gujarati, the danda punctuation it shares with Devanagari; the same ranges as app.css
RANGES = {
    "Gujarati": "U+0A80-0AFF,U+0964-0965,U+200C-200D,U+25CC",
    "Armenian": "U+0530-058F,U+FB13-FB17",
}
WEIGHTS = ("Regular", "Bold")


def codepoints(ranges: str) -> list[int]:
    out: list[int] = []
    for part in ranges.split(","):
        first, _, last = part.removeprefix("U+").partition("-")
        out.extend(range(int(first, 16), int(last or first, 16) + 1))
    return out


def main(source: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for script, ranges in RANGES.items():
        for weight in WEIGHTS:
            options = subset.Options()
            options.flavor = "woff2"
            options.layout_features = ["*"]  # conjuncts and marks need every GSUB/GPOS feature
            options.name_IDs = ["*"]  # keep the copyright and license records
            font = subset.load_font(str(source / f"NotoSans{script}-{weight}.ttf"), options)
            subsetter = subset.Subsetter(options)
            subsetter.populate(unicodes=codepoints(ranges))
            subsetter.subset(font)
            target = OUT / f"NotoSans{script}-{weight}.woff2"
            subset.save_font(font, str(target), options)
            print(f"{target.relative_to(ROOT)}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else NOTO)
