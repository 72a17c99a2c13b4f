"""Every "model §N[.M]" reference in code, help texts and docs names a section of docs/model.md.

The headings are parsed here from docs/model.md itself ("## 6. Title", "### 6.1 Title"); a
reference to a section that does not exist, or a Markdown link whose anchor disagrees with its
text, fails the test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "docs" / "model.md"
SCANNED_DIRS = ("phy", "fl", "privacy", "scenarios", "figures", "benchmarks", "tests", "docs")
SCANNED_FILES = ("README.md", "Makefile", "pyproject.toml", "CITATION.cff")
SUFFIXES = (".py", ".md", ".toml", ".txt", ".cff")

HEADING = re.compile(r"^#{2,3}\s+(\d+(?:\.\d+)?)\.?\s", re.M)
SECTION = r"\d+(?:\.\d+)?"
# "model §6.1", optionally a Markdown link "[model §6.1](model.md#sec-6-1)", then follow-ups such as
# ", §7.2", " and §9.5", " on §6.2", "–§6"
REFERENCE = re.compile(
    rf"model §({SECTION})(?:\]\(([^)]*)\))?((?:\s*(?:,|and|or|on|to|–|-|/)\s*§{SECTION})*)"
)
FOLLOW = re.compile(rf"§({SECTION})")


def model_sections() -> set[str]:
    return set(HEADING.findall(MODEL.read_text(encoding="utf-8")))


def scanned_files() -> list[Path]:
    files = [ROOT / name for name in SCANNED_FILES if (ROOT / name).is_file()]
    for top in SCANNED_DIRS:
        for dirpath, dirnames, filenames in os.walk(ROOT / top):
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
            files += [Path(dirpath) / f for f in filenames if f.endswith(SUFFIXES)]
    return sorted(files)


def bad_references(text: str, sections: set[str]) -> list[str]:
    """The references in ``text`` that name no section (or link to an anchor of another section)."""
    bad = []
    for match in REFERENCE.finditer(text):
        named = [match.group(1)] + FOLLOW.findall(match.group(3) or "")
        bad += [f"model §{n}" for n in named if n not in sections]
        link = match.group(2)
        if link is not None:
            expected = "#sec-" + match.group(1).replace(".", "-")
            if not (link.split("#")[0].endswith("model.md") and link.endswith(expected)):
                bad.append(f"[model §{match.group(1)}]({link})")
    return bad


def test_model_document_has_the_numbered_sections():
    sections = model_sections()
    assert {str(n) for n in range(1, 12)} <= sections
    assert {"5.1", "6.1", "6.4", "7.2", "7.5", "9.5", "9.6"} <= sections


def test_anchors_exist_for_every_section():
    text = MODEL.read_text(encoding="utf-8")
    for n in model_sections():
        assert f'<a id="sec-{n.replace(".", "-")}"></a>' in text, n


def test_the_checker_rejects_missing_sections():
    sections = model_sections()
    assert bad_references("see model §12 and model §6.9", sections) == ["model §12", "model §6.9"]
    assert bad_references("(model §6.1, §7.8)", sections) == ["model §7.8"]
    assert bad_references("[model §6.1](model.md#sec-6-2)", sections) == ["[model §6.1](model.md#sec-6-2)"]
    assert bad_references("(model §6.1, §7.2; [model §9.5](docs/model.md#sec-9-5))", sections) == []


def test_every_model_reference_names_an_existing_section():
    sections = model_sections()
    problems, count = [], 0
    for path in scanned_files():
        if path.resolve() == Path(__file__).resolve():
            continue  # the checker's own examples above
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        count += len(REFERENCE.findall(text))
        problems += [f"{path.relative_to(ROOT)}: {ref}" for ref in bad_references(text, sections)]
    assert count > 100, "expected the code and docs to cite the model document"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["README.md", "docs/privacy.md"])
def test_docs_point_to_the_model_document(name):
    assert "model.md" in (ROOT / name).read_text(encoding="utf-8")
