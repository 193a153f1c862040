"""Outside engines' side of the engine protocol (``docs/engines.md``): the command-line
bridge (:mod:`engines.bridge`) and the built-in players as outside engines
(:mod:`engines.builtin`). Nothing here is imported by the bot: these programs run on the
engine author's machine and talk to the bot over HTTP only."""
