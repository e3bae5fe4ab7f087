"""Where candidates run: the executor protocol and its implementations."""
