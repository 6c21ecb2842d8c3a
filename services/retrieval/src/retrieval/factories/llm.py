"""The chat model (any OpenAI-compatible server), and the knowledge extractor that asks it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.errors import ConfigurationError
from retrieval.settings import Settings

if TYPE_CHECKING:
    from retrieval.adapters.extraction.llm_knowledge import LlmKnowledgeExtractor
    from retrieval.adapters.openai.chat_llm import OpenAiChatLlm


def llm_from_settings(settings: Settings) -> OpenAiChatLlm:
    from retrieval.adapters.openai.chat_llm import OpenAiChatLlm

    api_key = settings.llm_api_key
    return OpenAiChatLlm(
        settings.llm_base_url,
        api_key.get_secret_value() if api_key is not None else None,
        settings.llm_model,
        request_timeout_s=settings.llm_request_timeout_s,
        call_timeout_s=settings.llm_call_timeout_s,
        max_attempts=settings.llm_max_attempts,
    )


def llm_knowledge(llm: OpenAiChatLlm, settings: Settings) -> LlmKnowledgeExtractor:
    """The chat model's extractor; ``ConfigurationError`` at start without a model to ask."""
    if not settings.llm_base_url or not settings.llm_model:
        raise ConfigurationError(
            "RETRIEVAL_GRAPH_EXTRACTOR=llm reads chunks with the chat model: set "
            "RETRIEVAL_LLM_BASE_URL and RETRIEVAL_LLM_MODEL, or RETRIEVAL_GRAPH_EXTRACTOR=rules"
        )
    from retrieval.adapters.extraction.llm_knowledge import LlmKnowledgeExtractor

    return LlmKnowledgeExtractor(llm, concurrency=settings.graph_extract_concurrency)
