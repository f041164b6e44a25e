"""Every ```python block in docs/ runs, page by page, in one module per page; README's too.

A block may include a file of the repository with pymdownx.snippets (`--8<-- "path"`, a
path from the repository root, as mkdocs.yml configures it). An included pytest module
under tests/ is not executed here: executing it would only define its test functions.
pytest collects and runs that file itself, so this checks that it is such a file. Any
other included file is put in place of its line and the block runs.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import io
import re
import sys
import tomllib
import types
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from wink.testing import EmulatedToolCall, ProviderEmulator, Turn

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
_SNIPPET = re.compile(r'^--8<-- "([^"]+)"\s*$', re.MULTILINE)
PAGES = sorted(DOCS.rglob("*.md"))


def _is_collected_test_module(path: Path) -> bool:
    """A file pytest runs by itself: under tests/ (testpaths), named test_*.py."""
    return (
        path.is_relative_to(ROOT / "tests") and re.fullmatch(r"test_\w*\.py", path.name) is not None
    )


def _resolve(block: str) -> str | None:
    """The code to run for `block`; None when it only includes pytest modules."""
    included = [ROOT / match for match in _SNIPPET.findall(block)]
    for path in included:
        assert path.is_file(), f"included file {path} does not exist"
    only_includes = not _SNIPPET.sub("", block).strip()
    if included and only_includes and all(_is_collected_test_module(p) for p in included):
        return None  # pytest runs these files itself
    return _SNIPPET.sub(lambda match: (ROOT / match.group(1)).read_text(encoding="utf-8"), block)


_SHOWN = re.compile(r"\n*```text\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _examples(text: str) -> list[tuple[str, str | None]]:
    """Each ```python block, with the ```text block right under it (only blank lines
    between): the output the example prints, shown to the reader."""
    found: list[tuple[str, str | None]] = []
    for match in _FENCE.finditer(text):
        shown = _SHOWN.match(text, match.end())
        found.append((match.group(1), shown.group(1) if shown else None))
    return found


def _run_blocks(
    blocks: list[str], name: str, source: str, shown: list[str | None] | None = None
) -> types.ModuleType:
    """Run `blocks` in one module; where `shown` has an output for a block, what the block
    prints must be exactly that."""
    module = types.ModuleType(name)  # dataclasses look their module up in sys.modules
    sys.modules[name] = module
    try:
        for index, block in enumerate(blocks):
            code = _resolve(block)
            if code is None:
                continue
            compiled = compile(code, f"{source}[block {index}]", "exec", dont_inherit=True)
            expected = shown[index] if shown is not None else None
            if expected is None:
                exec(compiled, module.__dict__)
                continue
            printed = io.StringIO()
            with redirect_stdout(printed):
                exec(compiled, module.__dict__)
            assert printed.getvalue() == expected, f"{source}[block {index}] prints otherwise"
    finally:
        del sys.modules[name]
    return module


# mcp.md starts MCP server processes: slow (docs/contributing.md)
PAGE_PARAMS = [
    pytest.param(
        page, id=str(page.relative_to(DOCS)), marks=[pytest.mark.slow] * (page.name == "mcp.md")
    )
    for page in PAGES
]


@pytest.mark.parametrize("page", PAGE_PARAMS)
def test_page_examples_run(page: Path) -> None:
    """Every example runs, and prints exactly the output shown under it."""
    examples = _examples(page.read_text(encoding="utf-8"))
    name = "docs_" + re.sub(r"\W", "_", str(page.relative_to(DOCS)))
    _run_blocks([code for code, _ in examples], name, page.name, [out for _, out in examples])


def test_an_example_must_print_the_output_shown_under_it() -> None:
    page = "```python\nprint('a')\n```\n\n```text\nb\n```\n\n```python\nprint(1)\n```\n"
    examples = _examples(page)
    assert examples == [("print('a')\n", "b\n"), ("print(1)\n", None)]
    with pytest.raises(AssertionError, match="prints otherwise"):
        _run_blocks([code for code, _ in examples], "docs_mutant", "mutant.md", ["b\n", None])
    _run_blocks(["print('b')\n"], "docs_fixed", "fixed.md", ["b\n"])


def test_included_pytest_modules_are_not_executed_but_must_exist(tmp_path: Path) -> None:
    example = ROOT / "tests" / "docs_examples" / "test_with_emulator.py"
    assert _resolve(f'--8<-- "{example.relative_to(ROOT)}"\n') is None
    helper = tmp_path / "helper.py"
    helper.write_text("VALUE = 42\n", encoding="utf-8")
    assert _resolve(f'--8<-- "{helper}"\nprint(VALUE)\n') == "VALUE = 42\n\nprint(VALUE)\n"
    with pytest.raises(AssertionError, match="does not exist"):
        _resolve('--8<-- "tests/no_such_file.py"\n')


def _executed_imports(page: Path) -> set[str]:
    """The modules the executed blocks of `page` import (included pytest modules are not
    executed here)."""
    modules: set[str] = set()
    for block in _FENCE.findall(page.read_text(encoding="utf-8")):
        code = _resolve(block)
        for node in ast.walk(ast.parse(code or "")):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module)
    return modules


def _modules_installed_by_wink_all() -> set[str]:
    """Every module of the distributions `pip install 'wink[all]'` asks for by name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["all"]]
    modules: set[str] = set()
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement)
        assert name is not None, requirement
        for file in importlib.metadata.distribution(name.group()).files or ():
            if file.suffix == ".py":
                parts = file.with_suffix("").parts
                modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return modules


def test_the_examples_need_nothing_but_wink_all() -> None:
    """A reader who ran `pip install 'wink[all]'` can run every example as written."""
    installed = _modules_installed_by_wink_all()
    for page in [*PAGES, ROOT / "README.md"]:
        for module in _executed_imports(page):
            top = module.partition(".")[0]
            if top == "wink" or top in sys.stdlib_module_names:
                continue
            assert module in installed, f"{page.name} imports {module}, not in wink[all]"


_ENTRY = re.compile(r"^::: (wink(?:\.testing|\.mcp)?)\.(\w+)$", re.MULTILINE)


@pytest.mark.parametrize("module", ["wink", "wink.testing", "wink.mcp"])
def test_every_public_name_has_an_api_reference_entry(module: str) -> None:
    """docs/reference/ has one `::: module.Name` line per name of `module.__all__`, and
    none for anything else."""
    entries: list[str] = []
    for page in (DOCS / "reference").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        entries += [name for owner, name in _ENTRY.findall(text) if owner == module]
    public = importlib.import_module(module).__all__
    assert sorted(set(public) - set(entries)) == [], f"no API reference entry in {module}"
    assert sorted(set(entries) - set(public)) == [], f"not in {module}.__all__"
    assert len(entries) == len(set(entries)), "a name has two entries"


@functools.cache
def _griffe_wink() -> Any:
    """The `wink` package as griffe reads it from src/ (once: it reads every module)."""
    import griffe

    loader = griffe.GriffeLoader(search_paths=[str(ROOT / "src")])
    package = loader.load("wink")
    loader.resolve_aliases(implicit=False, external=False)
    return package


@pytest.mark.parametrize("module", ["wink", "wink.testing", "wink.mcp"])
def test_every_public_name_has_a_docstring_for_its_entry(module: str) -> None:
    """Read as the API reference reads them (griffe, from src/): a type alias needs the
    string under it, which Python itself keeps nowhere."""
    package = _griffe_wink()
    undocumented = []
    for name in importlib.import_module(module).__all__:
        found = package[f"{module}.{name}".removeprefix("wink").lstrip(".")]
        target = found.final_target if found.is_alias else found
        if not (target.docstring and target.docstring.value.strip()):
            undocumented.append(name)
    assert undocumented == []


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in nav, f"{page} is missing from mkdocs.yml nav"


_DOC_REFERENCE = re.compile(r"docs/([a-z0-9/_-]+\.md)(?:#([a-z0-9_-]+))?")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)


def _anchors(page: Path) -> set[str]:
    """The ids the docs build gives the page's headings (its toc's slugs)."""
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    slugs = set[str]()
    for heading in _HEADING.findall(text):
        plain = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
        slugs.add(re.sub(r"[-\s]+", "-", plain))
    return slugs


def test_the_docs_pages_and_anchors_the_source_points_at_exist() -> None:
    """A docstring or message saying "see docs/tools.md#tool-choice" leads somewhere."""
    broken: list[str] = []
    for source in sorted((ROOT / "src").rglob("*.py")):
        for page_name, anchor in _DOC_REFERENCE.findall(source.read_text(encoding="utf-8")):
            page = DOCS / page_name
            if not page.is_file() or (anchor and anchor not in _anchors(page)):
                broken.append(f"{source.relative_to(ROOT)}: docs/{page_name}#{anchor}")
    assert broken == []
    assert "tool-choice" in _anchors(DOCS / "tools.md")
    assert "what-to-do-for-each-error" in _anchors(DOCS / "errors.md")


# --- README.md


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_example_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # The example uses the real Anthropic API: the SDK's own ANTHROPIC_BASE_URL and
    # ANTHROPIC_API_KEY variables point it at the emulator instead, code unchanged.
    blocks = _FENCE.findall(_readme())[:1]  # the example with a real provider
    assert 'create_adapter("anthropic:claude-sonnet-4-6")' in blocks[0]
    code = [line for line in blocks[0].splitlines() if line.strip()]
    assert len(code) <= 12, "the first example fits on a screen"
    assert 'evaluate("' in blocks[0]  # a string prompt
    script = [
        Turn.tool_calls(EmulatedToolCall("get_weather", {"city": "Lyon"})),
        Turn.tool_calls(EmulatedToolCall("get_weather", {"city": "Paris"})),
        Turn.text("Sunny in Paris."),
    ]
    with ProviderEmulator(script) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url("anthropic"))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        out = io.StringIO()
        with redirect_stdout(out):
            module = _run_blocks(blocks, "readme_example", "README.md")
        tool_results = emu.requests[1].body["messages"][-1]["content"]
    assert out.getvalue().startswith("Sunny in Paris. Usage(")
    assert module.response.text == "Sunny in Paris."
    assert tool_results[0]["is_error"] is True
    assert tool_results[0]["content"] == "no station in Lyon"


def test_readme_example_catches_a_failure_with_winkerror(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from wink.testing import Fault

    with ProviderEmulator([Fault.unauthorized()]) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url("anthropic"))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        out = io.StringIO()
        with redirect_stdout(out):
            _run_blocks(_FENCE.findall(_readme())[:1], "readme_example", "README.md")
    assert out.getvalue().startswith("failed: request failed for prompt 'prompt': HTTP 401")


def test_readme_runs_top_to_bottom_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer with no key pastes the README's examples: the first says what is
    missing (a `WinkError`, caught), the second runs the agent on the emulator and prints
    what the README shows."""
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    text = _readme()
    blocks = _FENCE.findall(text)
    assert len(blocks) == 2
    assert "ProviderEmulator" in blocks[1]
    out = io.StringIO()
    with redirect_stdout(out):
        _run_blocks(blocks, "readme_example", "README.md")
    printed = out.getvalue().splitlines()
    assert printed[0] == (
        "failed: no API key for anthropic: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or "
        "pass api_key="
    )
    after = text.split(blocks[1], 1)[1]  # the emulator example is followed by its output
    shown = re.match(r"```\n\n```text\n(.*?)^```", after, re.DOTALL | re.MULTILINE)
    assert shown is not None, "the emulator example is followed by its output"
    assert printed[1:] == shown.group(1).splitlines()


def test_ci_runs_the_readme_test_command() -> None:
    # README's second command is the test command; .ci/run must run exactly that
    commands = re.search(r"^```bash\n(.*?)^```", _readme(), re.DOTALL | re.MULTILINE)
    assert commands is not None
    lines = [line for line in commands.group(1).splitlines() if line and line[0] != "#"]
    assert len(lines) == 2, lines
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().splitlines()
    assert ci[-1] == lines[1]
    assert lines[1] == "python3 -m pip install nox && python3 -m nox"


def test_plain_nox_runs_tests_lint_typecheck_and_docs() -> None:
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    defaults = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and [ast.unparse(target) for target in node.targets] == ["nox.options.sessions"]
    ]
    assert defaults == [["tests", "lint", "typecheck", "docs"]]


def test_the_phase_table_of_errors_md_has_one_row_per_phase() -> None:
    """Each row starts with a phase and has three cells; nothing else sits in the table."""
    from typing import get_args

    from wink import EvaluationPhase

    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    table = text.split("| phase | meaning | retry? |\n|---|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()
    assert [re.match(r"\| `(\w+)` \|", row) is not None for row in rows] == [True] * len(rows)
    assert [row.split(" | ", 1)[0].strip("| `") for row in rows] == list(get_args(EvaluationPhase))
    assert all(row.count(" | ") == 2 and row.endswith(" |") for row in rows)
