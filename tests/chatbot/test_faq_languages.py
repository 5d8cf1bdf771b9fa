"""FAQ entries per language: a question in one language finds the entry written in another, and the answer is
the version in the question's language when there is one, else says which language it is in."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from chatbot.agent.offline.replies import faq_answer
from chatbot.faq import answer_question
from chatbot.models import FaqEntry
from chatbot.services import save_faq_translations
from tests.factories import FaqEntryFactory, SchoolFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("question", "words"), [
    ("请问学费大概多少钱？", "学费每学期收取一次"),
    ("Berapa bayaran untuk sekolah rendah?", "tiga penggal setahun"),
    ("கட்டணம் எவ்வளவு ஆகும்?", "வசூலிக்கப்படும்"),
    ("What do you charge per year?", "invoiced per term"),
])
def test_the_answer_comes_in_the_questions_language(demo_schools, question, words):
    result = answer_question(demo_schools["tampines"], question)
    assert result["status"] == "success"
    assert words in result["answer"]
    assert "answer_language" not in result


def test_without_a_version_in_that_language_the_answer_says_its_language(demo_schools):
    result = answer_question(demo_schools["tampines"], "学校的校服是什么样的？")
    assert result["status"] == "success"
    assert "Uniform Shop" in result["answer"]
    assert (result["answer_language"], result["question_language"]) == ("en", "zh-hans")
    assert "(We have this answer in English only.)" in faq_answer(result)


def test_an_entry_written_only_in_chinese_answers_an_english_question():
    school = SchoolFactory()
    FaqEntryFactory(school=school, question="How big are the classes?", answer="About 20 children.")
    FaqEntryFactory(school=school, language="zh-hans", question="学校有游泳池吗？", answer="有，一个25米的游泳池。")
    result = answer_question(school, "Do you have a swimming pool?")
    assert result["answer"] == "有，一个25米的游泳池。"
    assert (result["answer_language"], result["question_language"]) == ("zh-hans", "en")
    assert "Chinese only" in faq_answer(result)


def test_two_questions_in_two_languages_of_answer():
    school = SchoolFactory()
    fees = FaqEntryFactory(school=school, question="What are the fees?", answer="S$20,000 a year.")
    FaqEntryFactory(school=school, question="Is there a school bus?", answer="Yes, door to door.")
    save_faq_translations(fees, {"zh-hans": {"question": "学费多少？", "answer": "每年两万新元。"}})
    result = answer_question(school, "学费多少？有没有校车？")
    assert [a["answer"] for a in result["answers"]] == ["每年两万新元。", "Yes, door to door."]
    assert result["answers"][1]["answer_language"] == "en"


def test_saving_translations_again_keeps_the_ones_there():
    entry = FaqEntryFactory(question="Is there parking?", answer="Yes.")
    assert save_faq_translations(entry, {"ms": {"question": "Ada tempat letak kereta?", "answer": "Ada."}}) == 1
    assert save_faq_translations(entry, {"ms": {"question": "Ada parkir?", "answer": "Ada, percuma."},
                                         "zh-hans": {"question": "有停车位吗？", "answer": "有。"}}) == 1
    assert entry.translations.get(language="ms").answer == "Ada."
    assert entry.translations.get(language="zh-hans").answer == "有。"


def test_one_translation_per_language():
    entry = FaqEntryFactory()
    FaqEntryFactory(school=entry.school, translation_of=entry, language="zh-hans")
    with pytest.raises(IntegrityError):
        FaqEntryFactory(school=entry.school, translation_of=entry, language="zh-hans")


@pytest.mark.parametrize("problem", ["a translation", "another school", "the same language"])
def test_a_translation_must_fit_its_entry(problem):
    entry = FaqEntryFactory()
    original = {
        "a translation": FaqEntryFactory(school=entry.school, translation_of=entry, language="ms"),
        "another school": FaqEntryFactory(),
        "the same language": entry,
    }[problem]
    language = "en" if problem == "the same language" else "zh-hans"
    with pytest.raises(ValidationError):
        FaqEntry(school=entry.school, language=language, translation_of=original, question="Q?", answer="A").clean()


def test_entries_are_english_unless_said_otherwise():
    assert FaqEntryFactory().language == "en"


def _bus_and_lunch_school():
    school = SchoolFactory()
    FaqEntryFactory(school=school, question="Is there a school bus?", answer="Yes, buses run from Bedok and Simei.")
    FaqEntryFactory(school=school, question="Is lunch provided?", answer="Yes, a hot lunch; or bring your own.")
    FaqEntryFactory(school=school, question="Where is the school?", answer="Near Simei MRT, Bedok side.")
    FaqEntryFactory(school=school, question="Can I bring my children on the tour?", answer="Yes, bring them along.")
    return school


@pytest.mark.parametrize(("question", "words"), [
    # A place or a person named in the question is who or where, not the topic.
    ("Does a bus come out to Pasir Ris?", "buses run"),
    ("could my son Tobias come on the tour as well?", "bring them along"),
    # Words of the parent's language the word lists do not translate are not taken for the topic...
    ("bas sekolah lalu kawasan Pasir Ris tak?", "buses run"),
    ("makan tengahari disediakan atau bawak bekal sendiri?", "hot lunch"),
    ("Aravind ஐயும் கூட்டிட்டு வர முடியுமா?", "bring them along"),
    ("有没有校车到Pasir Ris那边？", "buses run"),
])
def test_names_and_untranslated_words_do_not_hide_the_topic(question, words):
    result = answer_question(_bus_and_lunch_school(), question)
    assert result["status"] == "success", result
    assert words in result["answer"]


@pytest.mark.parametrize("question", [
    "is there a rule about smartwatches?",
    "ada peraturan jam tangan pintar untuk murid?",  # ... but a topic the FAQ lacks stays unanswered
    "学校对智能手表有规定吗？",
])
def test_a_topic_the_faq_lacks_stays_unanswered_in_any_language(question):
    result = answer_question(_bus_and_lunch_school(), question)
    assert result["status"] == "no_match"


@pytest.mark.parametrize("question", ["wait ah, any bus or not?", "hold on, is there a bus?", "wait lah, bus got?"])
def test_a_wait_that_holds_the_conversation_is_no_waiting_list_question(question):
    school = _bus_and_lunch_school()
    FaqEntryFactory(school=school, question="Is there a waiting list?", answer="Year 2 has a waiting list.")
    result = answer_question(school, question)
    assert result["status"] == "success"
    assert "buses run" in result["answer"] and "waiting list" not in result["answer"]


@pytest.mark.django_db
@pytest.mark.parametrize("question", [
    "kindergarten got half day or not",
    "is nursery a full day?",
    "ada separuh hari untuk tadika?",
    "幼儿园有半天班吗？",
    "மழலையர் பள்ளிக்கு அரை நாள் இருக்கா?",
])
def test_a_half_or_full_day_asks_after_the_school_hours(demo_schools, question):
    """The half-day option is told in the school-hours entry: "half day" in any language finds it."""
    result = answer_question(demo_schools["tampines"], question)
    assert result["status"] == "success", result
    assert "12:00" in result["answer"]  # the half-day option's end, in whichever language answers


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["yuran setahun berapa", "yuran sepenggal brp ya"])
def test_a_topic_said_as_a_property_keeps_untranslated_words_light(demo_schools, question):
    """"yuran" (fees) is the topic even though it reads as cost, like "how much": the Malay words the lists do not
    translate ("setahun", a year) weigh as everyday words, as they do beside any other topic."""
    result = answer_question(demo_schools["tampines"], question)
    assert result["status"] == "success", result
    assert "S$" in result["answer"]


@pytest.mark.parametrize("question", ["what is the admission age", "what age to join?", "min age for nursery?",
                                      "how old to start school", "入学年龄是多少？", "சேர்க்கை வயது என்ன?"])
def test_an_age_for_joining_asks_the_age_not_how_to_apply_or_when_the_year_starts(demo_schools, question):
    result = answer_question(demo_schools["tampines"], question)
    assert result["status"] == "success" and "We take children from age 3" in result["answer"], result


def test_related_questions_offered_are_in_the_questions_language_where_the_entry_has_that_version(demo_schools):
    related = answer_question(demo_schools["tampines"], "有兄弟姐妹折扣吗？")["related_topics"]
    assert "学费是多少？" in related and "How much are the school fees?" not in related
    assert "Can fees be paid in instalments?" in related  # no Chinese version: as written
