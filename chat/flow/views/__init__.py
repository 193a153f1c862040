"""Views in one place: every text, keyboard and button datum the flow shows, as pure
functions of plain values (no store, no cache, no lock).

- :mod:`~chat.flow.views.codec`: button data and invitation links, written and read back;
- :mod:`~chat.flow.views.panel`: the private panel of the player to move;
- :mod:`~chat.flow.views.lobby_view`: the lobby message of a match being set up;
- :mod:`~chat.flow.views.messages`: hands, board and score texts, hints, summaries;
- :mod:`~chat.flow.views.texts`: the "where" line, a hand's title, a move as understood, why
  a move is refused.

Move descriptions, names and scores are :mod:`chat.describe`'s.
"""
