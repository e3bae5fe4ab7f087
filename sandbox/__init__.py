"""The execution side of aioeval: template processes that fork one sandboxed
child per candidate. Installed as ``aioeval.sandbox``; it never imports the
engine, which talks to it only through `protocol`."""
