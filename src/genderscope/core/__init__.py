"""Core engine: requests, tasks, backends, the response store and the runner."""
