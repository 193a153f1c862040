"""chat/ephemeral.py, the one module speaking Bot API 10.3 (issue 42): the exact shape of an
ephemeral send, and the new fields read from python-telegram-bot's ``api_kwargs``."""

from __future__ import annotations

from telegram import CallbackQuery, Message, User

from chat import ephemeral
from chat.ephemeral import EphemeralId

BOT = {"id": 99, "is_bot": True, "first_name": "Krendzu"}
ANN = {"id": 7, "is_bot": False, "first_name": "Ann"}
GROUP = {"id": -100, "type": "supergroup", "title": "Friends"}


def message(**fields: object) -> Message:
    data = {"message_id": 0, "date": 0, "chat": GROUP, "from": ANN, "text": "/hand", **fields}
    found = Message.de_json(data, None)
    assert found is not None
    return found


def test_a_send_is_made_ephemeral_in_bot_api_10_3s_shape_never_10_2s_flat_one() -> None:
    answer = ephemeral.send_kwargs(7, callback_query_id="q1")
    assert answer == {"ephemeral_message_parameters": {"receiver_user_id": 7,
                                                       "callback_query_id": "q1"}}
    reply = ephemeral.send_kwargs(7, reply_to=41)
    assert reply == {"ephemeral_message_parameters": {"receiver_user_id": 7},
                     "reply_parameters": {"ephemeral_message_id": 41}}
    pushed = ephemeral.send_kwargs(7)
    assert pushed == {"ephemeral_message_parameters": {"receiver_user_id": 7}}
    for shape in (answer, reply, pushed):
        # 10.2's flat parameters were replaced; a server ignoring them would show the group.
        assert "receiver_user_id" not in shape and "callback_query_id" not in shape
        assert "replace_callback_query_message" not in shape["ephemeral_message_parameters"]


def test_an_incoming_ephemeral_command_is_read_from_api_kwargs() -> None:
    command = message(ephemeral_message_id=5, receiver_user=BOT)
    assert ephemeral.incoming(command) == EphemeralId(-100, 7, 5)
    assert ephemeral.incoming(message(message_id=12)) is None  # an ordinary message
    assert ephemeral.incoming(message()) is None  # message_id 0 without the new field
    # Addressed to a person, not to the bot: not an ephemeral command to answer.
    assert ephemeral.incoming(message(ephemeral_message_id=5, receiver_user=ANN)) is None


def test_a_press_on_an_ephemeral_message_names_it_by_the_triple() -> None:
    panel = message(ephemeral_message_id=8, receiver_user=ANN, **{"from": BOT})
    query = CallbackQuery("q", User(7, "Ann", False), "c", message=panel, data="x")
    assert ephemeral.pressed(query) == EphemeralId(-100, 7, 8)
    ordinary = CallbackQuery("q", User(7, "Ann", False), "c",
                             message=message(message_id=3, **{"from": BOT}), data="x")
    assert ephemeral.pressed(ordinary) is None
    theirs = message(ephemeral_message_id=8, receiver_user={**ANN, "id": 8}, **{"from": BOT})
    assert ephemeral.pressed(CallbackQuery("q", User(7, "Ann", False), "c", message=theirs,
                                           data="x")) is None
    assert ephemeral.sent_id(panel) == 8 and ephemeral.sent_id(message(message_id=3)) is None
