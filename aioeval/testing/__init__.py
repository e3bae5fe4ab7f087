"""Test doubles that tests, benchmarks and users share: executors that run
nothing (for exercising the pipeline), and (see the generation package) a
fake OpenAI-compatible server and a fake clock."""
