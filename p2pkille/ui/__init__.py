"""The terminal game: a prompt-toolkit table screen over real protocol peers.

- :mod:`.human`: :class:`HumanDecider`, a decider that waits for the player's keys.
- :mod:`.hooknode`: :class:`HumanTableNode`, a table node that reports events and
  audits to the screen (the human's pending decisions use the engine's
  :class:`~p2pkille.engine.view.DecisionPending`, which the table node honours).
- :mod:`.localnet`: an in-memory asyncio transport for a table of local peers.
- :mod:`.paced`: :class:`PacedDecider`, a bot that takes its time so a person can follow.
- :mod:`.session`: a table of one human and N bot peers, all real protocol nodes.
- :mod:`.model`: the screen model (what is shown, what keys do), free of prompt-toolkit.
- :mod:`.app`: the prompt-toolkit application that renders the model.
- :mod:`.words`: the template language (persons, plurals, cards, calls) every text uses.
- :mod:`.narration`: the game told in Swedish and English, line by line.
- :mod:`.rules`: the rules page of a table's actual options.
- :mod:`.i18n`: the screen's other texts in Swedish and English.
- :mod:`.gamelog`: where the games are logged (the user's data directory).
"""
