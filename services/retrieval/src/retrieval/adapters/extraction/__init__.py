"""Entity and knowledge extractors: names found by their shape offline, or read by a chat model."""
