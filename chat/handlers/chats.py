"""Changes of a chat itself: migration to a supergroup, the bot added, removed or blocked."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.constants import ChatMemberStatus, ChatType

from chat.flow import lobby_data
from chat.handlers.admission import BotContext, services
from chat.model import Button
from chat.notices import Send
from chat.services import Services

log = logging.getLogger(__name__)


async def migrated(update: Update, context: BotContext) -> None:
    message = update.effective_message
    if message is not None and message.migrate_to_chat_id:
        await services(context).store.migrate_chat(message.chat.id, message.migrate_to_chat_id)


async def membership(update: Update, context: BotContext) -> None:
    """The bot was removed from a group: end what it can no longer show."""
    change = update.my_chat_member
    if change is None:
        return
    if change.chat.type == ChatType.PRIVATE:
        if change.new_chat_member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
            # Blocked: tell the tables at once (once each); /start brings everything back.
            svc = services(context)
            await svc.flow.mark_unreachable(change.chat.id)
            for stored in await svc.flow.my_matches(change.chat.id):
                await svc.delivery.report_unreachable(stored.match_id, change.chat.id)
        return
    if change.new_chat_member.status in (ChatMemberStatus.MEMBER,
                                         ChatMemberStatus.ADMINISTRATOR):
        # Whether panels may be pushed into the group unasked (issue 42): an administrator
        # bot may send a member an ephemeral message at any time.
        svc = services(context)
        svc.delivery.run(await svc.flow.bot_rights(
            change.chat.id, change.new_chat_member.status == ChatMemberStatus.ADMINISTRATOR,
            tell=change.old_chat_member.status == ChatMemberStatus.ADMINISTRATOR))
    if (change.new_chat_member.status in (ChatMemberStatus.MEMBER,
                                          ChatMemberStatus.ADMINISTRATOR)
            and change.old_chat_member.status in (ChatMemberStatus.LEFT,
                                                  ChatMemberStatus.BANNED)):
        await greet_group(services(context), change.chat.id, change.from_user.language_code
                          if change.from_user else None,
                          admin=change.new_chat_member.status == ChatMemberStatus.ADMINISTRATOR)
        return
    if change.new_chat_member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        # Every forum topic's match and set-up too, not only the chat's own.
        closed = await services(context).flow.close_chat(change.chat.id)
        log.info("removed from chat %s: %d match(es) and set-up(s) closed", change.chat.id,
                 closed)


#: The greeting's "New match" button: ``v1:l:0:new`` (no lobby has id 0).
NEW_MATCH_LOBBY = 0


async def greet_group(svc: Services, chat_id: int, language_code: str | None, *,
                      admin: bool = False) -> None:
    """Added to a group: three lines and a button to set up a match. The greeting is the
    chat's newest message, so under privacy mode a bare ``/new`` reaches the bot too."""
    # The group speaks the language of whoever added the bot (not of each sender) until an
    # admin's /lang: a Russian speaker's command in an English group is answered in English.
    tr = await svc.flow.adopt_chat_language(
        chat_id, svc.flow.catalogs.pick(None, language_code).language)
    in_group = await svc.flow.panels_in_group(chat_id)
    text = "\n".join([
        tr._("Hi! I am the Krendzu bot: card renju, «four in a row», for 2 to 4 players."),
        tr._("Press the button (or send /new) to set up a match. Each player's cards show "
             "here in the group to that player alone.") if in_group else
        tr._("Press the button (or send /new) to set up a match; everyone's cards come to "
             "them privately."),
        tr._("/rules explains the game with pictures, /help lists every command."),
        *([tr._("Admins: make me an administrator, and each player's hand opens by itself "
                "on their turn.")] if in_group and not admin else []),
    ])
    svc.delivery.run([Send(chat_id, text, group=True, keyboard=[[Button(
        tr._("▶ New match"), lobby_data(NEW_MATCH_LOBBY, "new"))]])])
