"""Real client libraries, unmodified, against the server (issue 25): the openai SDK's streamed
tool calling (chat.completions.stream with a pydantic tool), LangChain's ChatOpenAI.bind_tools and
with_structured_output, pydantic-ai with a tool and a structured output, and instructor. The model
is a tiny random-weight Llama over the Qwen 3 tokenizer with the Qwen 2.5 chat template (Hermes
<tool_call> syntax, tiny_random.py): it cannot follow instructions, so every request uses a forced
mode (tool_choice required / a named function, or a json_schema response_format), where the
grammar makes the output valid whatever the weights. The oracle is each client's own parsing and
pydantic validation of what it receives (a result of the wrong type or an invalid one fails)."""
from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from server import Server, TEST_DATA
from tiny_random import make_tiny_llama

PROMPT = "What is the weather in Paris?"


class Weather(BaseModel):
    """Weather for a city. Closed (additionalProperties false) and bounded: a random model never
    ends an extra key's unbounded string, and a client may send the schema without strict."""
    model_config = ConfigDict(extra="forbid")
    city: str = Field(max_length=6)
    days: int = Field(ge=1, le=7)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = make_tiny_llama(tmp_path_factory.mktemp("hermes"), "qwen3", 151936, [151645, 151643])
    s = Server(str(d), "--chat-template", str(TEST_DATA / "chat_templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"),
               name="tiny+hermes").start()
    yield s
    assert s.stop() == 0, s.tail()


def test_openai_sdk_streams_a_forced_tool_call(srv):
    import openai
    client = srv.client()
    for choice in ("required", {"type": "function", "function": {"name": "Weather"}}):
        kinds = set()
        with client.chat.completions.stream(model=srv.model_id, messages=[{"role": "user", "content": PROMPT}],
                                            tools=[openai.pydantic_function_tool(Weather)], tool_choice=choice,
                                            parallel_tool_calls=False, temperature=1, max_tokens=200) as stream:
            for ev in stream:
                kinds.add(ev.type)
            final = stream.get_final_completion()
        assert "tool_calls.function.arguments.delta" in kinds, kinds
        ch = final.choices[0]
        assert ch.finish_reason == "tool_calls"
        (tc,) = ch.message.tool_calls
        assert tc.function.name == "Weather" and isinstance(tc.function.parsed_arguments, Weather)


def test_langchain_bind_tools_and_structured_output(srv):
    from langchain_openai import ChatOpenAI
    llm = ChatOpenAI(model=srv.model_id, base_url=srv.url + "/v1", api_key="unused", temperature=1, max_tokens=200,
                     max_retries=0)
    for choice in ("Weather", "any"):
        msg = llm.bind_tools([Weather], tool_choice=choice, parallel_tool_calls=False).invoke(PROMPT)
        assert [c["name"] for c in msg.tool_calls] == ["Weather"], msg
        Weather(**msg.tool_calls[0]["args"])
    chunks = list(llm.bind_tools([Weather], tool_choice="Weather", parallel_tool_calls=False).stream(PROMPT))
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    assert len(chunks) > 2 and [c["name"] for c in merged.tool_calls] == ["Weather"]
    Weather(**merged.tool_calls[0]["args"])
    for method in ("json_schema", "function_calling"):
        out = llm.with_structured_output(Weather, method=method).invoke(PROMPT)
        assert isinstance(out, Weather), (method, out)


def test_pydantic_ai_agent_with_a_tool(srv):
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    model = OpenAIChatModel(srv.model_id, provider=OpenAIProvider(base_url=srv.url + "/v1", api_key="unused"))
    agent = Agent(model, output_type=Weather,
                  model_settings={"temperature": 1, "max_tokens": 200, "parallel_tool_calls": False})
    seen = []

    async def until_called(ctx, tool_def):
        # A random model may pick the same tool every turn: offered until called once, then only
        # the output tool is left for the forced choice.
        return None if seen else tool_def

    @agent.tool_plain(prepare=until_called)
    def forecast(city: str = Field(max_length=6)) -> str:
        """The forecast for a city."""
        seen.append(city)
        return "sunny"

    result = agent.run_sync(PROMPT)
    assert isinstance(result.output, Weather)
    # Every model turn was a call (the output tool or ours): the messages hold no plain text reply.
    calls = [p for m in result.all_messages() for p in getattr(m, "parts", []) if p.part_kind == "tool-call"]
    assert calls and calls[-1].tool_name == "final_result" and len(calls) == len(seen) + 1 and len(seen) <= 1


def test_instructor_tools_and_json_schema_modes(srv):
    import instructor
    for mode in (instructor.Mode.TOOLS, instructor.Mode.JSON_SCHEMA):
        client = instructor.from_openai(srv.client(), mode=mode)
        out = client.chat.completions.create(model=srv.model_id, response_model=Weather, max_retries=0,
                                             messages=[{"role": "user", "content": PROMPT}], temperature=1,
                                             max_tokens=200)
        assert isinstance(out, Weather), mode
