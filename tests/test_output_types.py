"""`Prompt[OutputT]` -> `PromptResponse[OutputT]`: a type checker knows `response.output`.

Runs as a test (the assertions hold at run time) and is type-checked by `nox -s typecheck`
(`assert_type` fails the check if the inferred type drifts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from pydantic import BaseModel

from wink import MarkdownSection, Prompt, PromptResponse, Session
from wink.testing.scripted import ScriptedAdapter, final


@dataclass(frozen=True)
class Report:
    city: str
    degrees: int


class Reading(BaseModel):
    city: str
    degrees: int


SECTIONS = [MarkdownSection(key="t", title="T", template="Weather?")]


def test_a_typed_prompt_gives_a_typed_output() -> None:
    prompt = Prompt(name="report", sections=SECTIONS, output_type=Report)
    assert_type(prompt, Prompt[Report])
    response = ScriptedAdapter([final({"city": "Paris", "degrees": 21})]).evaluate(
        prompt, session=Session()
    )
    assert_type(response, PromptResponse[Report])
    assert_type(response.output, Report | None)
    assert response.output == Report("Paris", 21)


def test_a_base_model_prompt_gives_the_model() -> None:
    prompt = Prompt(name="reading", sections=SECTIONS, output_type=Reading)
    assert_type(prompt, Prompt[Reading])
    response = ScriptedAdapter([final({"city": "Oslo", "degrees": 3})]).evaluate(
        prompt, session=Session()
    )
    assert_type(response, PromptResponse[Reading])
    assert_type(response.output, Reading | None)
    assert response.output == Reading(city="Oslo", degrees=3)


def test_a_prompt_without_output_type_gives_none() -> None:
    prompt = Prompt(name="plain", sections=SECTIONS)
    assert_type(prompt, Prompt[None])
    response = ScriptedAdapter([final("hi")]).evaluate(prompt, session=Session())
    assert_type(response.output, None)
    assert response.output is None
