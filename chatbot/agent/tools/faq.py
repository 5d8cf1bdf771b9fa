"""get_faq_answer: the school's FAQ (chatbot.faq)."""

from chatbot import faq
from chatbot.agent.tools.context import _ctx


def get_faq_answer(question: str) -> dict:
    """The school's FAQ answer to a parent's question.

    Args:
        question: In the parent's words.
    """
    ctx = _ctx()
    return faq.answer_question(ctx.school, question, history=ctx.history)
