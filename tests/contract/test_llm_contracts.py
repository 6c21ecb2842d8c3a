"""The chat models honour the Llm contract: the scripted fake, and the OpenAI-compatible
adapter over HTTP against the loopback stand-in."""

from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval_testkit.contracts import LlmContract
from retrieval_testkit.contracts.llm import Scripted
from retrieval_testkit.openai_standin import OpenAiStandIn
from retrieval_testkit.scripted_llm import Reply, ScriptedLlm


class TestScriptedLlm(LlmContract):
    @pytest.fixture
    def scripted(self) -> Scripted:
        return ScriptedLlm


class TestOpenAiChatLlm(LlmContract):
    @pytest.fixture
    def standin(self) -> Iterator[OpenAiStandIn]:
        with OpenAiStandIn(api_key="contract-key") as running:
            yield running

    @pytest.fixture
    async def scripted(self, standin: OpenAiStandIn) -> AsyncIterator[Scripted]:
        llm = OpenAiChatLlm(
            standin.base_url,
            standin.api_key,
            standin.model,
            request_timeout_s=2.0,
            call_timeout_s=5.0,
        )

        def script(reply: Reply) -> OpenAiChatLlm:
            standin.reply = reply
            return llm

        yield script
        await llm.close()
