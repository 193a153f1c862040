"""How a handler says what is not a typed move's answer: an information reply (:func:`say`,
:func:`inform`), and in a group never again what was said there a moment ago, a refused move
included (:func:`unrepeated`); the kind a reply is queued under (:func:`reply_kind`), and
whether the sender administers the group (:func:`is_admin`).

Apart from :mod:`chat.handlers.context` because a typed move never needs them (an accepted
move's reply is its board post: tests/test_one_request.py counts the modules its request
runs), while :class:`~chat.handlers.context.Call` and a refused move's answer do."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from telegram import Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError

from chat.answers import answer_key
from chat.handlers.admission import (
    BotContext,
    command_of,
    command_source,
    request_of,
    services,
    slow_down,
    thread_of,
)
from chat.handlers.ephemeral_answers import privately
from chat.notices import Notice, Send
from chat.services import Services
from chat.throttle import INFO_COMMANDS


async def say(svc: Services, update: Update, text: str) -> None:
    chat = update.effective_chat
    if chat is not None:
        await inform(svc, update, [Send(chat.id, text, thread_id=thread_of(update),
                                        group=chat.type != ChatType.PRIVATE,
                                        info=reply_kind(svc, update))])


async def inform(svc: Services, update: Update, notices: Sequence[Notice]) -> None:
    """Deliver the answer to an update: its replies in a group (``Send.info``) unless they
    repeat a recent answer (:func:`unrepeated`)."""
    notices = list(notices)
    chat = update.effective_chat
    source = command_source(update)
    if source is not None:  # an ephemeral command: no repeat to spare the group
        svc.delivery.run(privately(source, notices))
        return
    replies = [n for n in notices if isinstance(n, Send) and n.info is not None
               and chat is not None and n.chat_id == chat.id]
    if chat is None or chat.type == ChatType.PRIVATE or not replies:
        svc.delivery.run(notices)
        return
    kept = await unrepeated(svc, update, replies)
    out: list[Notice] = []
    for notice in notices:
        if notice is replies[0]:
            out.extend(kept)
        elif not any(notice is reply for reply in replies):
            out.append(notice)
    svc.delivery.run(out)


async def unrepeated(svc: Services, update: Update, replies: list[Send]) -> list[Send]:
    """What to post of the replies to a command in a group (issue 43: the bot must never
    amplify a spammer). An answer given there lately (:mod:`chat.answers`) is not given
    again: the first repeat after it went out gets a short reply pointing to it, later ones
    nothing. An information command's answer is the group's, whoever asks again; any other
    reply (a refused move, a set-up's "you are seated already") only its person's. Only a
    new information answer counts against the group's information budget
    (:meth:`chat.throttle.Throttle.new_answer`)."""
    chat, user = update.effective_chat, update.effective_user
    command = command_of(update, svc.flow.bot_username)
    if chat is None or user is None or command is None:
        return replies
    info = command in INFO_COMMANDS
    thread = thread_of(update)
    key = answer_key(chat.id, thread, replies, person=None if info else user.id)
    given = svc.answers.get(key)
    if given is not None:  # a repeat
        if given.message_id is None or given.pointed:
            return []  # on its way, or pointed to already: nothing more
        given.pointed = True
        request = await request_of(svc, update)
        return [Send(chat.id, request.tr._("{name}, the answer is just above ↑",
                                           name=request.actor.name),
                     thread_id=thread, group=True, info=reply_kind(svc, update, "/again"),
                     reply_to=given.message_id)]
    if info and not await svc.throttle.new_answer(chat.id, user.id):
        if svc.throttle.warn_once(user.id):
            await slow_down(svc, update)
        return []
    svc.answers.remember(key)
    return [replace(replies[0], answer=key), *replies[1:]]


def reply_kind(svc: Services, update: Update, part: str = "") -> str:
    """What a reply answers (the command and who asked): replies wait behind board posts
    and panels, and a newer reply of the same kind replaces a queued one (chat/delivery)."""
    command = command_of(update, svc.flow.bot_username) or "text"
    user = update.effective_user
    return f"{command}{part}:{user.id if user else 0}"


async def is_admin(update: Update, context: BotContext) -> bool:
    """Whether the user administers the group: asked of Telegram at most once a minute per
    (chat, user), so repeated refused commands cost no Bot API call. (A failed call is not
    remembered: the next command asks again.)"""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None or chat.type == ChatType.PRIVATE:
        return False
    known = services(context).admins
    answer = known.get((chat.id, user.id))
    if answer is not None:
        return answer
    try:
        member = await context.bot.get_chat_member(chat.id, user.id)
    except TelegramError:
        return False
    answer = member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)
    known.put((chat.id, user.id), answer)
    return answer
