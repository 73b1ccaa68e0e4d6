"""A document's language from a sample of its pages: the script first, then py3langid for
the languages one script is shared by."""

from __future__ import annotations

import pytest

from quire.text.language import SAMPLE_CHARS, SAMPLE_PAGES, detect, language_name, sample

PARAGRAPHS = {
    "en": "The committee met on Tuesday to discuss the budget for the coming year and agreed "
    "to postpone the decision until the auditors had finished their report.",
    "fr": "Le comité s'est réuni mardi pour discuter du budget de l'année prochaine et a "
    "décidé de reporter la décision jusqu'à ce que les auditeurs aient terminé leur rapport.",
    "de": "Der Ausschuss trat am Dienstag zusammen, um den Haushalt für das kommende Jahr zu "
    "beraten, und beschloss, die Entscheidung bis zum Bericht der Prüfer zu vertagen.",
    "es": "El comité se reunió el martes para discutir el presupuesto del próximo año y "
    "acordó aplazar la decisión hasta que los auditores terminaran su informe.",
    "uk": "Комітет зібрався у вівторок, щоб обговорити бюджет на наступний рік, і вирішив "
    "відкласти рішення, доки аудитори не завершать свій звіт.",
    "ru": "Комитет собрался во вторник, чтобы обсудить бюджет на следующий год, и решил "
    "отложить решение до тех пор, пока аудиторы не закончат свой отчёт.",
    "fa": "کمیته روز سه‌شنبه برای بررسی بودجه سال آینده تشکیل جلسه داد و تصمیم گرفت که "
    "تصمیم‌گیری را تا پایان گزارش حسابرسان به تعویق بیندازد.",
    "ja": "委員会は火曜日に集まり、来年度の予算について話し合い、監査人の報告が終わるまで"
    "決定を延期することにした。",
    "zh-Hans": "委员会星期二开会讨论明年的预算，并决定推迟作出决定，直到审计人员完成他们的报告。",
    "ko": "위원회는 화요일에 모여 내년 예산을 논의했고 감사인들이 보고서를 마칠 때까지 결정을 "
    "미루기로 했다.",
}


@pytest.mark.parametrize(("tag", "text"), PARAGRAPHS.items())
def test_a_paragraph_is_enough(tag: str, text: str) -> None:
    assert detect([text]) == tag


def test_too_little_text_is_no_language() -> None:
    assert detect([]) is None
    assert detect(["", "   ", "Fig. 3", "12"]) is None


def test_the_majority_decides_over_an_english_abstract() -> None:
    pages = [PARAGRAPHS["en"]] + [PARAGRAPHS["fr"]] * 6
    assert detect(pages) == "fr"
    assert detect([PARAGRAPHS["en"]] + [PARAGRAPHS["ja"]] * 2) == "ja"


def test_the_sample_is_bounded_and_spread_over_the_pages() -> None:
    pages = [f"page {n:05d} " + "x" * 5_000 for n in range(2_000)]
    text = sample(pages)
    assert len(text) <= SAMPLE_CHARS + SAMPLE_PAGES
    assert "page 00000" in text and "page 01980" in text  # first to (nearly) last
    assert text.count("page ") == SAMPLE_PAGES
    assert sample(["a", "", "b"]) == "a\nb"  # short documents are read whole


def test_names() -> None:
    assert language_name("ja") == "Japanese"
    assert language_name("zh-Hant") == "Chinese (Traditional)"
    assert language_name("pt-BR") == "Portuguese"
    assert language_name("xx") == "xx"
