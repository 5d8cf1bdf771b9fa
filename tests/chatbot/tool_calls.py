"""Calling the agent's tools as the loop does, for the tool tests."""

from asgiref.sync import async_to_sync

from chatbot.agent import memory, tools
from chatbot.services import current_conversation


def tool_context(school, contact) -> tools.ToolContext:
    return tools.ToolContext(school=school, contact=contact, conversation=current_conversation(school, contact, "web"),
                             active=memory.ActiveContext(school.pk, contact.pk))


def call(ctx, name, **arguments):
    return async_to_sync(tools.execute)(name, arguments, ctx)[1]
