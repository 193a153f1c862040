"""Pictures of Krendzu positions with Pillow: boards, hands and replays.

Pure functions — a view or a record in, a Pillow image or encoded bytes out; no I/O and
nothing Telegram. Board pictures are drawn from an observation (``match.observation(seat)``)
and show public facts only (hand *sizes*, never hands)::

    from render import board_photo, board_document, hand_png, replay_gif

    view = match.observation(None)
    photo = board_photo(view)        # JPEG for a chat post (~1280 px, around the last move
                                     # if the whole board would be too small to read)
    document = board_document(view)  # full-size PNG to send as a file
    hand = hand_png(match.observation(seat).tour.hand)
    gif = replay_gif(match, tour=0)  # one frame per card placed, plus the empty start
    hint = board_photo(view, suggestion=[(card, x, y)], cell_labels=True)  # /hint

Pictures for the rules (``render.illustrations``, imported on first use)::

    rules_picture()                  # PNG: card values and combinations with real faces
    rules_board_example()            # PNG: a tour with a goal and an own goal, captioned
    rules_coordinates_example()      # PNG: the cells a card may go to, labelled

Every picture speaks English (``render/texts.py``, the source texts of the chat's gettext
catalog); ``texts={...}`` gives it another language's words, which the chat layer reads
from its catalog (``chat.i18n.picture_texts(tr)``).
"""

from render.board import (
    MAX_RATIO,
    MAX_SUM,
    PHOTO_SIDE,
    BoardLayout,
    Position,
    board_document,
    board_image,
    board_jpeg,
    board_layout,
    board_photo,
    board_photos,
    board_png,
    encode_jpeg,
    encode_png,
    legal_cells,
    photo_options,
)
from render.faces import DEFAULT_THEME, Theme, card_tile, empty_tile
from render.hand import hand_image, hand_jpeg, hand_png
from render.records import position, tour_steps, truncate
from render.replay import replay_frames, replay_gif
from render.stats import (
    LeaderRow,
    StatsCard,
    leaderboard_image,
    leaderboard_png,
    stats_card_image,
    stats_card_png,
)
from render.texts import TEXTS, texts_for
from render.typeface import clean_text, display_name

#: Names served lazily from :mod:`render.illustrations`, so that
#: ``python -m render.illustrations`` runs without the module being imported twice.
_ILLUSTRATIONS = ("rules_board_example", "rules_coordinates_example", "rules_picture")


def __getattr__(name: str) -> object:
    if name in _ILLUSTRATIONS:
        from render import illustrations

        return getattr(illustrations, name)
    raise AttributeError(f"module 'render' has no attribute {name!r}")


__all__ = [
    "DEFAULT_THEME",
    "MAX_RATIO",
    "MAX_SUM",
    "PHOTO_SIDE",
    "TEXTS",
    "BoardLayout",
    "LeaderRow",
    "Position",
    "StatsCard",
    "Theme",
    "board_document",
    "board_image",
    "board_jpeg",
    "board_layout",
    "board_photo",
    "board_photos",
    "board_png",
    "card_tile",
    "clean_text",
    "display_name",
    "empty_tile",
    "encode_jpeg",
    "encode_png",
    "hand_image",
    "hand_jpeg",
    "hand_png",
    "leaderboard_image",
    "leaderboard_png",
    "legal_cells",
    "photo_options",
    "position",
    "replay_frames",
    "replay_gif",
    "rules_board_example",
    "rules_coordinates_example",
    "rules_picture",
    "stats_card_image",
    "stats_card_png",
    "texts_for",
    "tour_steps",
    "truncate",
]
