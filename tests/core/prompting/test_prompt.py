"""Prompts: validation, binding, rendering, visibility and structured output."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, strategies as st
from pydantic import ValidationError

from wink.core.foundation.errors import (
    DuplicateBindingError,
    PromptError,
    PromptRenderError,
    PromptValidationError,
    VisibilityExpansionRequired,
)
from wink.core.foundation.messages import OutputSpec
from wink.core.foundation.results import ToolResult
from wink.core.prompting.prompt import (
    OPEN_SECTIONS_TOOL,
    MarkdownSection,
    OpenSectionsParams,
    Prompt,
    parse_output,
)
from wink.core.prompting.resources import ResourceBinding, ResourceScope
from wink.core.prompting.session import Session
from wink.core.prompting.tools import Tool, ToolContext
from wink.core.prompting.visibility import (
    SetVisibility,
    VisibilityOverrides,
    apply_visibility,
    reduce_visibility,
)


@dataclass(frozen=True)
class User:
    name: str
    plan: str = "free"


@dataclass(frozen=True)
class Task:
    goal: str


@dataclass(frozen=True)
class SearchParams:
    query: str


@dataclass(frozen=True)
class Hit:
    title: str


@dataclass(frozen=True)
class Report:
    hits: list[Hit]
    summary: str


def search(params: SearchParams, *, context: ToolContext) -> ToolResult[Hit]:
    return ToolResult.ok(Hit(params.query))


def make_tool(name: str) -> Tool[Any, Any]:
    return Tool(name=name, description=f"{name} tool", handler=search)


def section(key: str, template: str = "Body.", **options: Any) -> MarkdownSection:
    return MarkdownSection(key=key, title=key.title(), template=template, **options)


def guide_prompt() -> Prompt:
    """intro, then a summarized guide whose child is summarized too."""
    return Prompt(
        name="support",
        sections=[
            section("intro", "Hello ${name}.", tools=[make_tool("lookup")]),
            section(
                "guide",
                "The whole guide.",
                summary="A guide exists.",
                tools=[make_tool("search")],
                children=[
                    section("basics", "Basics.", tools=[make_tool("faq")]),
                    section(
                        "details",
                        "All the details.",
                        summary="Details exist.",
                        tools=[make_tool("deep_search")],
                    ),
                ],
            ),
        ],
    ).bind(User("Ada"))


def context() -> ToolContext:
    return ToolContext(
        session=Session(),
        resources=ResourceScope.empty(),
        prompt_name="support",
        call_id="call-1",
        tool_name=OPEN_SECTIONS_TOOL,
    )


def open_tool(prompt: Prompt, **render: Any) -> Tool[Any, Any]:
    tools = {tool.name: tool for tool in prompt.render(**render).tools}
    return tools[OPEN_SECTIONS_TOOL]


def call_open(tool: Tool[Any, Any], *keys: str) -> ToolResult[Any]:
    params = tool.params_adapter.validate_python({"section_keys": list(keys)})
    return tool.handler(params, context=context())


# --- sections


@pytest.mark.parametrize("key", ["", "Intro", "_intro", "-x", "a.b", "a b", "é"])
def test_section_keys_are_validated(key: str) -> None:
    with pytest.raises(PromptValidationError, match="section key") as caught:
        section(key)
    assert caught.value.section_path == (key,)


@pytest.mark.parametrize("key", ["intro", "0", "a-b_c", "step2"])
def test_valid_section_keys(key: str) -> None:
    assert section(key).key == key


@pytest.mark.parametrize("title", ["", "   ", "two\nlines"])
def test_section_titles_are_one_line(title: str) -> None:
    with pytest.raises(PromptValidationError, match="title") as caught:
        MarkdownSection(key="intro", title=title, template="x")
    assert caught.value.section_path == ("intro",)


def test_malformed_template_says_where() -> None:
    with pytest.raises(PromptValidationError, match="line 2, column 7") as caught:
        section("intro", "Fine.\nCosts $5 today")
    assert caught.value.section_path == ("intro",)
    assert "$$" in str(caught.value)


def test_malformed_summary_is_refused_too() -> None:
    with pytest.raises(PromptValidationError, match="summary"):
        section("intro", summary="${unclosed")


def test_params_must_be_a_dataclass() -> None:
    with pytest.raises(PromptValidationError, match="dataclass type") as caught:
        section("intro", params=dict)
    assert caught.value.dataclass_type is dict
    assert caught.value.section_path == ("intro",)


def test_placeholders_must_be_fields_of_params() -> None:
    with pytest.raises(PromptValidationError, match="not a field of User") as caught:
        section("intro", "Hi ${name}, your ${tier} plan", params=User)
    error = caught.value
    assert error.placeholder == "tier"
    assert error.dataclass_type is User
    assert error.section_path == ("intro",)


def test_summary_placeholders_must_be_fields_of_params_too() -> None:
    with pytest.raises(PromptValidationError) as caught:
        section("intro", "Hi ${name}", summary="${missing}", params=User)
    assert caught.value.placeholder == "missing"


def test_sibling_child_keys_are_unique() -> None:
    with pytest.raises(PromptValidationError, match="share the key 'a'") as caught:
        section("parent", children=[section("a"), section("a")])
    assert caught.value.section_path == ("parent", "a")


def test_sections_normalize_sequences_to_tuples() -> None:
    built = section("intro", tools=[make_tool("lookup")], children=[section("a")])
    assert isinstance(built.tools, tuple)
    assert isinstance(built.children, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.key = "other"  # type: ignore[misc]


def test_section_contents_are_checked() -> None:
    with pytest.raises(PromptValidationError, match="Tool instances or functions, got an int"):
        section("intro", tools=[42])  # type: ignore[list-item]
    with pytest.raises(PromptValidationError, match="MarkdownSection instances"):
        section("intro", children=["text"])  # type: ignore[list-item]


# --- prompts


@pytest.mark.parametrize("name", ["", "has space", "slash/name", "ümlaut"])
def test_prompt_names_are_safe(name: str) -> None:
    with pytest.raises(PromptValidationError, match="prompt name"):
        Prompt(name=name, sections=[])


def test_top_level_keys_are_unique() -> None:
    with pytest.raises(PromptValidationError, match="share the key") as caught:
        Prompt(name="p", sections=[section("a"), section("b"), section("a")])
    assert caught.value.section_path == ("a",)


def test_tool_names_are_unique_across_the_prompt() -> None:
    sections = [
        section("a", tools=[make_tool("search")]),
        section("b", children=[section("c", tools=[make_tool("search")])]),
    ]
    with pytest.raises(PromptValidationError, match=r"'search' is offered in both a and b\.c") as e:
        Prompt(name="p", sections=sections)
    assert e.value.section_path == ("b", "c")


def test_a_tool_twice_in_one_section_is_a_duplicate() -> None:
    with pytest.raises(PromptValidationError, match="offered twice in a"):
        Prompt(name="p", sections=[section("a", tools=[make_tool("x"), make_tool("x")])])


def test_open_sections_is_reserved() -> None:
    with pytest.raises(PromptValidationError, match="reserved") as caught:
        Prompt(name="p", sections=[section("a", tools=[make_tool(OPEN_SECTIONS_TOOL)])])
    assert caught.value.section_path == ("a",)


@pytest.mark.parametrize("output_type", [dict, int, list[Hit], "Report"])
def test_output_type_must_be_a_dataclass(output_type: Any) -> None:
    with pytest.raises(PromptValidationError, match="output_type") as caught:
        Prompt(name="p", sections=[], output_type=output_type)
    expected = output_type if isinstance(output_type, type) else None
    assert caught.value.dataclass_type is expected


def test_sections_must_be_sections() -> None:
    with pytest.raises(PromptValidationError, match="MarkdownSection instances, got a str"):
        Prompt(name="p", sections=["## Intro"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("value", "given"),
    [("Hello", "a str"), (None, "None"), (3, "an int"), ({"a": 1}, "a dict")],
)
def test_sections_that_are_not_a_list_say_what_was_given(value: Any, given: str) -> None:
    # a str used to be read as its characters: "got 'H'"
    with pytest.raises(PromptValidationError) as caught:
        Prompt(name="p", sections=value)
    assert str(caught.value) == f"sections must be a list of MarkdownSection, got {given}"


def test_one_section_where_a_list_belongs_is_named() -> None:
    with pytest.raises(
        PromptValidationError, match="list of MarkdownSection, got a MarkdownSection"
    ):
        Prompt(name="p", sections=section("a"))  # type: ignore[arg-type]
    with pytest.raises(PromptValidationError, match="children must be a list of MarkdownSection"):
        section("a", children=section("b"))  # type: ignore[arg-type]


def test_a_str_where_a_section_expects_a_list_is_named() -> None:
    with pytest.raises(PromptValidationError) as caught:
        section("a", tools="search")  # type: ignore[arg-type]
    assert caught.value.message == "tools must be a list of Tool, got a str"
    assert caught.value.section_path == ("a",)
    with pytest.raises(
        PromptValidationError, match="children must be a list of MarkdownSection, got a str"
    ):
        section("a", children="b")  # type: ignore[arg-type]


def test_sections_may_come_from_any_iterable() -> None:
    prompt = Prompt(name="p", sections=(section(key) for key in ("a", "b")))
    assert [s.key for s in prompt.sections] == ["a", "b"]


@pytest.mark.parametrize("field", ["title", "template", "summary"])
@pytest.mark.parametrize("value", [None, 3, b"bytes", ["x"]])
def test_section_texts_must_be_strings(field: str, value: Any) -> None:
    if field in ("summary", "title") and value is None:
        return  # no summary, no title (no heading): a valid section
    arguments: dict[str, Any] = {"key": "a", "title": "A", "template": "t", field: value}
    with pytest.raises(PromptValidationError, match=f"section {field} must be a string, got"):
        MarkdownSection(**arguments)


# --- binding


def test_bind_returns_a_new_prompt_and_accumulates() -> None:
    base = Prompt(name="p", sections=[section("a", "${name}: ${goal}")])
    with_user = base.bind(User("Ada"))
    both = with_user.bind(Task("ship"))
    assert base.bound_params == ()
    assert with_user.bound_params == (User("Ada"),)
    assert both.bound_params == (User("Ada"), Task("ship"))
    assert both.render().text == "## A\n\nAda: ship"


def test_binding_the_same_dataclass_twice_is_refused() -> None:
    prompt = Prompt(name="p", sections=[]).bind(User("Ada"))
    with pytest.raises(PromptValidationError, match="User is already bound") as caught:
        prompt.bind(User("Bob"))
    assert caught.value.dataclass_type is User


@pytest.mark.parametrize(("value", "kind"), [("text", str), ({"name": "x"}, dict), (User, User)])
def test_bind_takes_dataclass_instances_only(value: Any, kind: type[Any]) -> None:
    with pytest.raises(PromptValidationError, match="dataclass instances") as caught:
        Prompt(name="p", sections=[]).bind(value)
    assert caught.value.dataclass_type is kind


def test_bind_merges_resources() -> None:
    class Clock:
        pass

    class Database:
        pass

    prompt = Prompt(name="p", sections=[]).bind(resources={Clock: Clock})
    prompt = prompt.bind(resources={Database: ResourceBinding(Database, "tool_call")})
    assert set(prompt.resources) == {Clock, Database}
    with pytest.raises(DuplicateBindingError) as caught:
        prompt.bind(resources={Clock: Clock})
    assert caught.value.protocol is Clock


# --- rendering


def test_headings_follow_depth_and_bodies_are_dedented() -> None:
    prompt = Prompt(
        name="p",
        sections=[
            section(
                "a",
                """
                First line.
                  Indented line.
                """,
                children=[section("b", "B.", children=[section("c", "")])],
            ),
            section("d", "D costs $$5."),
        ],
    )
    rendered = prompt.render()
    assert rendered.text == (
        "## A\n\nFirst line.\n  Indented line.\n\n### B\n\nB.\n\n#### C\n\n## D\n\nD costs $5."
    )
    assert rendered.sections_rendered == (("a",), ("a", "b"), ("a", "b", "c"), ("d",))
    assert rendered.sections_summarized == ()


def test_headings_stop_at_six() -> None:
    deepest = section("f")
    for key in "edcba":
        deepest = section(key, children=[deepest])
    text = Prompt(name="p", sections=[deepest]).render().text
    assert "###### E" in text
    assert "###### F" in text
    assert "#######" not in text


def test_section_params_fill_placeholders() -> None:
    @dataclass(frozen=True)
    class Other:
        name: str

    prompt = Prompt(name="p", sections=[section("a", "Hi ${name} (${plan})", params=User)])
    assert prompt.bind(Other("wrong"), User("Ada", "pro")).render().text == "## A\n\nHi Ada (pro)"


def test_unbound_section_params_fail_to_render() -> None:
    prompt = Prompt(
        name="p", sections=[section("a", children=[section("b", "${name}", params=User)])]
    )
    with pytest.raises(PromptRenderError, match="needs a bound User") as caught:
        prompt.render()
    assert caught.value.dataclass_type is User
    assert caught.value.section_path == ("a", "b")


def test_placeholders_come_from_the_first_dataclass_with_that_field() -> None:
    @dataclass(frozen=True)
    class Team:
        name: str
        size: int

    prompt = Prompt(name="p", sections=[section("a", "${name} of ${size}")])
    assert prompt.bind(User("Ada"), Team("core", 4)).render().text == "## A\n\nAda of 4"
    assert prompt.bind(Team("core", 4), User("Ada")).render().text == "## A\n\ncore of 4"


def test_an_unknown_placeholder_fails_to_render() -> None:
    prompt = Prompt(name="p", sections=[section("a", "${name} wants ${goal}")]).bind(User("Ada"))
    with pytest.raises(PromptRenderError, match=r"\$\{goal\}") as caught:
        prompt.render()
    assert caught.value.placeholder == "goal"
    assert caught.value.section_path == ("a",)
    assert caught.value.dataclass_type is None
    assert "(section a)" in str(caught.value)


def test_hidden_sections_are_checked_on_the_first_render() -> None:
    prompt = Prompt(
        name="p",
        sections=[section("a", summary="Short.", children=[section("b", "${goal}")])],
    )
    with pytest.raises(PromptRenderError) as caught:
        prompt.render()
    assert caught.value.section_path == ("a", "b")


def test_tools_are_collected_in_section_order() -> None:
    prompt = Prompt(
        name="p",
        sections=[
            section(
                "a", tools=[make_tool("one")], children=[section("b", tools=[make_tool("two")])]
            ),
            section("c", tools=[make_tool("three"), make_tool("four")]),
        ],
    )
    assert [tool.name for tool in prompt.render().tools] == ["one", "two", "three", "four"]


def test_output_spec_inlines_references() -> None:
    rendered = Prompt(name="p", sections=[], output_type=Report).render()
    assert isinstance(rendered.output, OutputSpec)
    assert rendered.output.name == "Report"
    assert rendered.output_type is Report
    encoded = json.dumps(rendered.output.schema)
    assert "$ref" not in encoded
    assert "$defs" not in encoded
    assert rendered.output.schema["properties"]["hits"]["items"]["properties"]["title"]


def test_no_output_type_means_no_output_spec() -> None:
    rendered = Prompt(name="p", sections=[section("a")]).render()
    assert rendered.output is None
    assert rendered.output_type is None


@given(st.text())
def test_any_value_renders_verbatim(value: str) -> None:
    prompt = Prompt(name="p", sections=[section("a", "<${name}>")]).bind(User(value))
    assert prompt.render().text == f"## A\n\n<{value}>"


@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()))
def test_values_are_rendered_with_str(value: object) -> None:
    @dataclass(frozen=True)
    class Anything:
        value: object

    prompt = Prompt(name="p", sections=[section("a", "${value}")]).bind(Anything(value))
    assert prompt.render().text == f"## A\n\n{value}"


@given(st.text().filter(lambda text: "$" not in text))
def test_text_without_placeholders_renders_as_written(text: str) -> None:
    import textwrap

    prompt = Prompt(name="p", sections=[section("a", text)])
    body = textwrap.dedent(text).strip()
    expected = f"## A\n\n{body}" if body else "## A"
    assert prompt.render().text == expected


# --- visibility


def test_summarized_sections_hide_children_and_tools() -> None:
    rendered = guide_prompt().render()
    assert "A guide exists." in rendered.text
    assert "The whole guide." not in rendered.text
    assert "Basics." not in rendered.text
    assert 'section_keys=["guide"]' in rendered.text
    assert [tool.name for tool in rendered.tools] == ["lookup", OPEN_SECTIONS_TOOL]
    assert rendered.sections_rendered == (("intro",), ("guide",))
    assert rendered.sections_summarized == (("guide",),)


def test_open_sections_is_offered_only_when_something_is_summarized() -> None:
    rendered = Prompt(name="p", sections=[section("a", tools=[make_tool("x")])]).render()
    assert [tool.name for tool in rendered.tools] == ["x"]
    assert OPEN_SECTIONS_TOOL not in rendered.text


def test_overrides_open_a_section() -> None:
    rendered = guide_prompt().render(overrides={("guide",): "full"})
    assert "The whole guide." in rendered.text
    assert "### Basics\n\nBasics." in rendered.text
    assert "### Details\n\nDetails exist." in rendered.text
    assert 'section_keys=["guide.details"]' in rendered.text
    assert [tool.name for tool in rendered.tools] == ["lookup", "search", "faq", OPEN_SECTIONS_TOOL]
    assert rendered.sections_summarized == (("guide", "details"),)


def test_everything_open_removes_the_builtin_tool() -> None:
    rendered = guide_prompt().render(overrides={("guide",): "full", ("guide", "details"): "full"})
    names = [tool.name for tool in rendered.tools]
    assert names == ["lookup", "search", "faq", "deep_search"]
    assert rendered.sections_summarized == ()


def test_summary_override_and_unknown_paths_change_nothing() -> None:
    default = guide_prompt().render()
    rendered = guide_prompt().render(overrides={("guide",): "summary", ("nope",): "full"})
    assert rendered.text == default.text


def test_a_summary_override_on_a_section_without_summary_is_ignored() -> None:
    rendered = guide_prompt().render(overrides={("intro",): "summary"})
    assert "Hello Ada." in rendered.text


@pytest.mark.parametrize(
    "overrides", [{"guide": "full"}, {(): "full"}, {("guide",): "open"}, {(1,): "full"}]
)
def test_bad_overrides_are_refused(overrides: Any) -> None:
    with pytest.raises(PromptValidationError, match="visibility"):
        guide_prompt().render(overrides=overrides)


def test_reduce_visibility_merges_and_later_wins() -> None:
    first = reduce_visibility(None, SetVisibility({("a",): "full"}))
    assert first == VisibilityOverrides({("a",): "full"})
    second = reduce_visibility(first, SetVisibility({("a",): "summary", ("b",): "full"}))
    assert second.overrides == {("a",): "summary", ("b",): "full"}
    assert first.overrides == {("a",): "full"}


def test_events_copy_their_overrides() -> None:
    source = {("a",): "full"}
    event = SetVisibility(source)  # type: ignore[arg-type]
    source[("b",)] = "full"
    assert event.overrides == {("a",): "full"}
    assert VisibilityOverrides().overrides == {}


def test_session_overrides_drive_rendering() -> None:
    session = Session()
    prompt = guide_prompt()
    assert prompt.render(session=session).sections_summarized == (("guide",),)
    apply_visibility(session, {("guide",): "full"})
    assert session.get(VisibilityOverrides, None) == VisibilityOverrides({("guide",): "full"})
    assert "The whole guide." in prompt.render(session=session).text
    apply_visibility(session, {("guide", "details"): "full"})
    assert prompt.render(session=session).sections_summarized == ()
    assert session[SetVisibility] == (
        SetVisibility({("guide",): "full"}),
        SetVisibility({("guide", "details"): "full"}),
    )


def test_the_argument_wins_over_the_session() -> None:
    session = Session()
    apply_visibility(session, {("guide",): "full"})
    rendered = guide_prompt().render(session=session, overrides={("guide",): "summary"})
    assert rendered.sections_summarized == (("guide",),)


def test_session_overrides_follow_snapshots() -> None:
    session = Session()
    apply_visibility(session, {("guide",): "summary"})
    snapshot = session.snapshot()
    apply_visibility(session, {("guide",): "full"})
    assert guide_prompt().render(session=session).sections_summarized == (("guide", "details"),)
    session.restore(snapshot)
    assert guide_prompt().render(session=session).sections_summarized == (("guide",),)


class StandInSession:
    """Only the session API prompt.py relies on: dispatch, register_reducer, get."""

    def __init__(self) -> None:
        self.slices: dict[type[Any], Any] = {}
        self.reducers: dict[type[Any], list[tuple[Any, type[Any]]]] = {}

    def register_reducer(
        self, event_type: type[Any], reducer: Any, *, slice_type: type[Any]
    ) -> None:
        self.reducers.setdefault(event_type, []).append((reducer, slice_type))

    def dispatch(self, event: object) -> None:
        for reducer, slice_type in self.reducers.get(type(event), []):
            self.slices[slice_type] = reducer(self.slices.get(slice_type), event)

    def get(self, slice_type: type[Any], default: Any) -> Any:
        return self.slices.get(slice_type, default)


def test_apply_visibility_registers_its_reducer_once() -> None:
    session = StandInSession()
    apply_visibility(session, {("guide",): "full"})  # type: ignore[arg-type]
    apply_visibility(session, {("guide", "details"): "full"})  # type: ignore[arg-type]
    assert len(session.reducers[SetVisibility]) == 1
    rendered = guide_prompt().render(session=session)  # type: ignore[arg-type]
    assert rendered.sections_summarized == ()


# --- the open_sections tool


def test_open_sections_tool_reads_its_params() -> None:
    tool = open_tool(guide_prompt())
    assert tool.params_type is OpenSectionsParams
    assert tool.parameters_schema["required"] == ["section_keys"]
    assert "guide" in tool.description


def test_open_sections_asks_for_the_overrides() -> None:
    with pytest.raises(VisibilityExpansionRequired) as caught:
        call_open(open_tool(guide_prompt()), "guide")
    assert caught.value.requested_overrides == {("guide",): "full"}
    assert caught.value.section_path == ("guide",)
    assert isinstance(caught.value, PromptError)


def test_opening_a_nested_section_opens_its_summarized_ancestors() -> None:
    with pytest.raises(VisibilityExpansionRequired) as caught:
        call_open(open_tool(guide_prompt()), "guide.details")
    assert caught.value.requested_overrides == {("guide",): "full", ("guide", "details"): "full"}


def test_opening_only_requests_what_is_closed() -> None:
    tool = open_tool(guide_prompt(), overrides={("guide",): "full"})
    with pytest.raises(VisibilityExpansionRequired) as caught:
        call_open(tool, " guide.details ", "guide")
    assert caught.value.requested_overrides == {("guide", "details"): "full"}


def test_opening_an_open_section_is_a_no_op() -> None:
    tool = open_tool(guide_prompt(), overrides={("guide",): "full"})
    result = call_open(tool, "guide", "guide.basics", "intro")
    assert result.success
    assert "already shown" in result.message


@pytest.mark.parametrize(
    ("keys", "fragment"),
    [
        (("guides",), "unknown section 'guides'"),
        (("guide", "guide/details", "x"), "unknown sections 'guide/details', 'x'"),
        ((), "no section given"),
    ],
)
def test_unknown_sections_go_back_to_the_model(keys: tuple[str, ...], fragment: str) -> None:
    result = call_open(open_tool(guide_prompt()), *keys)
    assert not result.success
    assert result.code == "invalid_input"
    assert result.value is None
    assert result.message.startswith(fragment)
    assert result.message.endswith("; summarized sections: guide")


def test_the_full_flow_renders_what_the_model_asked_for() -> None:
    session = Session()
    prompt = guide_prompt()
    with pytest.raises(VisibilityExpansionRequired) as caught:
        call_open(open_tool(prompt, session=session), "guide.details")
    apply_visibility(session, caught.value.requested_overrides)  # type: ignore[arg-type]
    rendered = prompt.render(session=session)
    assert "All the details." in rendered.text
    assert [tool.name for tool in rendered.tools] == ["lookup", "search", "faq", "deep_search"]


# --- structured output


def test_parse_output_reads_json() -> None:
    text = '{"hits": [{"title": "a"}], "summary": "one"}'
    assert parse_output(Report, text) == Report([Hit("a")], "one")


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"title": "a"}\n```',
        '```\n{"title": "a"}\n```',
        '  ```JSON\n{"title": "a"}```  \n',
    ],
)
def test_parse_output_strips_a_fence(text: str) -> None:
    assert parse_output(Hit, text) == Hit("a")


@pytest.mark.parametrize("text", ["", "not json", '{"summary": "no hits"}', "```json\n[1]\n```"])
def test_parse_output_raises_pydantic_errors(text: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_output(Report, text)
    assert isinstance(caught.value, ValueError)


def test_parse_output_accepts_any_type() -> None:
    assert parse_output(list[int], "[1, 2]") == [1, 2]


def test_a_literal_section_is_sent_as_written() -> None:
    with pytest.raises(PromptValidationError, match="malformed placeholder"):
        MarkdownSection(key="q", template="Costs ${x} and $")
    rules = MarkdownSection(key="rules", title="Rules", template="Be brief.")
    literal = MarkdownSection(key="question", template="  Costs ${x} and $ {y}\n", literal=True)
    prompt = Prompt(name="mixed", sections=[rules, literal])
    assert prompt.render().text == "## Rules\n\nBe brief.\n\n  Costs ${x} and $ {y}\n"
    assert literal.placeholders == ()


def test_a_section_without_a_title_has_no_heading() -> None:
    untitled = MarkdownSection(
        key="q",
        template="Just ${word}.",
        children=[MarkdownSection(key="sub", title="Sub", template="Below.")],
    )
    rendered = Prompt(name="u", sections=[untitled]).bind(Word("this")).render()
    assert rendered.text == "Just this.\n\n### Sub\n\nBelow."


def test_a_prompt_from_text_is_one_literal_turn() -> None:
    prompt = Prompt.from_text("What is $5 + {x}?", instructions="Answer with ${nothing}.")
    rendered = prompt.render()
    assert rendered.text == "What is $5 + {x}?"
    assert rendered.instructions == "Answer with ${nothing}."
    assert prompt.name == "prompt"


@dataclass(frozen=True)
class Word:
    word: str
