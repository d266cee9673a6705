"""The docs' links hold: every link between the docs, and every docs/ path the code names,
reaches a file and, where it names one, an anchor; the code points at timeless guides,
never into the dated archive (only `tfbench profile --into` writes there)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
CODE = [
    p
    for folder in ("tfbench", "tests", "benchmarks", ".ci", ".github")
    for p in sorted((ROOT / folder).rglob("*"))
    if p.is_file() and p.suffix in {".py", ".yml", ""} and p != Path(__file__)
]
LINK = re.compile(r"\]\(([^)\s]+)\)")
NAMED = re.compile(r"docs/[\w/.-]+\.md(?:#[\w-]+)?")
WRITES_THE_ARCHIVE = {ROOT / "tfbench" / "cli" / "profile.py"}


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation out, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text()
    ids = set(re.findall(r'<a id="([\w-]+)"></a>', text))
    return ids | {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def _broken(target: str, base: Path) -> str | None:
    """Why a link from a file in `base` does not hold; None where it does."""
    path, _, anchor = target.partition("#")
    page = (base / path).resolve() if path else None
    if page is not None and not page.exists():
        return "no such file"
    if anchor and page is not None and page.suffix == ".md" and anchor not in _anchors(page):
        return f"no anchor #{anchor}"
    return None


def test_every_link_between_the_docs_reaches_its_file_and_anchor():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            if target.startswith("#"):
                if target[1:] not in _anchors(doc):
                    broken.append(f"{doc.relative_to(ROOT)}: {target}: no anchor")
            elif why := _broken(target, doc.parent):
                broken.append(f"{doc.relative_to(ROOT)}: {target}: {why}")
    assert not broken, "\n".join(broken)


def test_the_code_names_docs_that_exist_and_none_in_the_archive():
    broken = []
    for file in CODE:
        try:
            text = file.read_text()
        except UnicodeDecodeError:
            continue
        for named in NAMED.findall(text):
            if "/archive/" in named and file not in WRITES_THE_ARCHIVE:
                broken.append(f"{file.relative_to(ROOT)}: {named}: the dated archive")
            elif why := _broken(named, ROOT):
                broken.append(f"{file.relative_to(ROOT)}: {named}: {why}")
    assert not broken, "\n".join(broken)


def _record_table() -> str:
    """docs/formats.md's table of the measured record, as its declaration gives it."""
    from tfbench.measure import record

    rows = [
        "| key | form | kept by a repeat | a point's repeats | what it holds |",
        "|---|---|---|---|---|",
    ]
    for f in record.FIELDS:
        form = f.form or "(the run's own: not read back)"
        rows.append(
            f"| `{f.name}` | {form} | {'yes' if f.kept else ''} | {f.combined or ''} | {f.what} |"
        )
    return "\n".join(rows)


def test_the_formats_guide_holds_the_measured_records_declaration():
    """Its table is tfbench.measure.record.FIELDS, row for row (paste it from the message)."""
    table = _record_table()
    assert table in (ROOT / "docs" / "formats.md").read_text(), f"the table is now:\n{table}"


def _declared_kinds():
    """Each kept kind whose check returns a declared record (grammar.schema's TypedDict)."""
    import typing

    from tfbench import keptfiles

    for kind in keptfiles.KINDS:
        check = getattr(kind, "check", None)
        record = check and typing.get_type_hints(check).get("return")
        if typing.is_typeddict(record):
            yield kind, record


def test_the_formats_guide_names_every_key_each_kinds_declaration_holds():
    """A key added to a kept kind's declaration is named (`key`) in that kind's row of
    docs/formats.md, or this fails naming it."""
    rows = [
        r
        for r in (ROOT / "docs" / "formats.md").read_text().splitlines()
        if r.startswith("| `results/")
    ]
    seen = 0
    for kind, record in _declared_kinds():
        folder = f"| `results/{kind.FOLDER}/"
        (row,) = [r for r in rows if r.startswith(folder) and kind.named(_name_in(r))]
        missing = [k for k in record.__annotations__ if f"`{k}`" not in row]
        assert not missing, f"docs/formats.md's row of {kind.__name__} lacks {missing}"
        seen += 1
    assert seen >= 7


def _name_in(row: str) -> str:
    """A row's file name as a real one would be (its placeholders filled)."""
    path = row.split("`")[1]
    name = path.rsplit("/", 1)[1].replace("\\|", "|")
    fills = {"<old>": "v2.21.0", "<new>": "v2.22.0rc0", "[.plant-S]": "", "I": "1", "N": "4"}
    fills |= {"<cpu|gpu>": "cpu", "<commit8>": "0123abcd", "<env>": "virtualenv-py3.11"}
    fills |= {"<tag>": "v2.22.0rc0", "<nightly version>": "2.22.0.dev20260215"}
    for placeholder, value in fills.items():
        name = name.replace(placeholder, value)
    return name
