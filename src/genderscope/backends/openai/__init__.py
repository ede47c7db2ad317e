"""OpenAI-compatible servers: chat, completions, batch API, worker pool."""
