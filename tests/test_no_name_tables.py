"""No table keyed by a provider's or a host's name outside its folder: a name compared
(`== "openai"`, `case "google"`) or used as a key (`"anthropic": ...`) outside
`src/wink/providers/` is a fact about one provider that belongs in its folder. So is a
name built into an attribute to look up (`getattr(self, f"_{api}_create")`): methods
named per provider are a table keyed by its name.

`_NOT_MOVED_YET` lists the places that still hold some (counted per file):
the count may only go down, and a file not listed must have none."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "wink"
NAMES = (
    "openai", "openai-responses", "anthropic", "google", "gemini", "azure", "azure-responses",
    "deepseek", "openrouter", "groq", "mistral", "xai", "ollama", "vertex", "vertex-anthropic",
    "bedrock",
)  # fmt: skip
_NAME = "|".join(re.escape(name) for name in NAMES)
_KEYED = re.compile(
    rf"""(?:[=!]=\s*["']({_NAME})["'])"""  # compared
    rf"""|(?:["']({_NAME})["']\s*[=!]=)"""
    rf"""|(?:case\s+["']({_NAME})["'])"""  # matched
    rf"""|(?:["']({_NAME})["']\s*:\s*\S)"""  # a key
    rf"""|(?:\bin\s*\(\s*["']({_NAME})["'])"""  # a membership test
    r"""|(?:\bgetattr\(\s*[^,()]+,\s*f["'])"""  # a name built into an attribute
)

_NOT_MOVED_YET = {
    "adapters/registry.py": 4,  # the registry itself: each host's name -> its module
}


def _keyed_uses() -> dict[str, int]:
    found: dict[str, int] = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith("providers/"):
            continue
        count = len(_KEYED.findall(path.read_text(encoding="utf-8")))
        if count:
            found[relative] = count
    return found


def test_no_provider_name_is_a_key_outside_its_folder() -> None:
    found = _keyed_uses()
    new = {path: count for path, count in found.items() if path not in _NOT_MOVED_YET}
    assert not new, f"provider or host names used as keys outside providers/: {new}"
    grown = {
        path: (count, _NOT_MOVED_YET[path])
        for path, count in found.items()
        if count > _NOT_MOVED_YET[path]
    }
    assert not grown, f"more keyed uses than before (found, allowed): {grown}"


def test_the_pattern_finds_what_it_looks_for() -> None:
    for text in (
        'if name == "openai":',
        'case "google":',
        '{"anthropic": 1}',
        'x in ("groq", "y")',
        'getattr(self, f"_{endpoint.api}_{endpoint.action}")',
    ):
        assert _KEYED.search(text), text
    for text in (
        'provider = "openai"',
        'create_adapter("openai:gpt-4.1")',
        '"openai"',
        'getattr(client, "base_url", "")',
    ):
        assert not _KEYED.search(text), text
