"""The Llm port on an OpenAI-compatible chat completions API."""
