"""The offline fact extractor on what people say about themselves, the way they say it."""

from __future__ import annotations

import pytest

from memories.llm.facts import extract_facts_heuristic


def _facts(text: str) -> list[tuple[str, str | None]]:
    return [(f.text, f.slot) for f in extract_facts_heuristic(messages=[(1, f"user: {text}")])]


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("I am allergic to shellfish, so no shrimp for me.", [("The user is allergic to shellfish.", None)]),
        (
            "My sister Aiko lives in Osaka.",
            [
                ("The user's sister Aiko lives in Osaka.", "sister aiko:residence"),
                ("The user's sister is named Aiko.", "sister aiko:name"),
            ],
        ),
        (
            "I quit the hospital. I work as a data analyst at Rakuten now.",
            [
                ("The user no longer works at the hospital.", "job"),
                ("The user works as a data analyst at Rakuten now.", "job"),
            ],
        ),
        ("We finally moved! Kyoto is home now.", [("The user lives in Kyoto now.", "residence")]),
        ("Hi, I'm Mei!", [("The user's name is Mei.", "name")]),
        ("I went back to eating meat after two years", [("The user eats meat again.", "diet")]),
        ("my flight to Lisbon is on 14 March", [("The user's flight to Lisbon is on 14 March.", "plan:flight")]),
        ("We adopted a puppy called Biscuit.", [("The user has a puppy named Biscuit.", "pet:biscuit")]),
        ("I'm a paramedic.", [("The user is a paramedic.", "job")]),
        ("I don't eat pork.", [("The user does not eat pork.", None)]),
        ("Sushi is my favorite food.", [("The user's favourite food is Sushi.", "favourite:food")]),
        ("the problem is my asthma, cold mornings make it worse", [("The user has asthma.", None)]),
        ("Three months at Zalando now, still learning the codebase.", [("The user works at Zalando.", "job")]),
        ("Day two at Hargreaves Lansdown done, my feet hurt.", [("The user works at Hargreaves Lansdown.", "job")]),
        ("I'm sous chef at Osteria Lupa.", [("The user works as sous chef at Osteria Lupa.", "job")]),
        ("I start at the Stadtwerke next Tuesday.", [("The user works at the Stadtwerke.", "job")]),
        ("I met someone, we've had three dates.", [("The user is seeing someone new.", "partner")]),
        (
            "I'm running my first half triathlon on June 9 in Porto and I'm terrified",
            [("The user's triathlon is on June 9 in Porto.", "plan:triathlon")],
        ),
        ("so we moved to the 21 March ceremony instead", [("The user's ceremony is on 21 March.", "plan:ceremony")]),
        ("my brother is a welder in Gdynia.", [("The user's brother is a welder in Gdynia.", "brother:job")]),
        ("My wife's got a new job. She works at Aldi now.", [("The user's wife works at Aldi now.", "wife:job")]),
        ("I started dating Sam in May.", [("The user started dating Sam.", "partner")]),
        ("I'm marketing manager at Unilever.", [("The user works as marketing manager at Unilever.", "job")]),
        ("Ardent Foods hired me as a quality lead.", [("The user works at Ardent Foods as a quality lead.", "job")]),
        ("I accepted the offer from Shopify.", [("The user works at Shopify.", "job")]),
        ("I got promoted to head nurse.", [("The user works as head nurse.", "job")]),
        ("We moved into a flat in Porto last week.", [("The user lives in Porto.", "residence")]),
        ("I'm back in Manila for good.", [("The user lives in Manila.", "residence")]),
        (
            "My wife Noor is at her mum's tonight. She's a pharmacist at Boots, so late shifts.",
            [
                ("The user's wife is named Noor.", "partner"),
                ("The user's wife Noor is a pharmacist at Boots.", "wife noor:job"),
            ],
        ),
        ("I've started seeing someone, a guy from climbing.", [("The user has started seeing someone.", "partner")]),
    ],
)
def test_what_people_say_about_themselves_becomes_a_fact_in_the_third_person(said, facts):
    assert _facts(said) == facts


@pytest.mark.parametrize(
    "said",
    [
        "I'd love to live by the sea one day.",  # a wish
        "If I ever moved to Canada I would live in Toronto.",  # a hypothetical
        "Do you think I should work at Google?",  # a question
        "I used to live in Lyon.",  # no longer so
        "I'm so tired today, long day at work.",  # a passing moment
        "My boss just moved to Berlin.",  # someone else's news
        "I love it.",  # nothing specific
        "We spent two weeks at Lake Garda.",  # a holiday, not a job
        "I met someone from your company at the fair.",  # an acquaintance
        "My sister visited. He is a doctor, the guy she brought.",  # "he" is not the sister
        "My son's coach came by. He's a firefighter.",  # "he" is the coach
        "I'm meeting the manager at Tesco tomorrow.",  # not a title
        "I've been seeing Fleetwood Mac posters everywhere.",  # not a partner
        "Week one at Yellowstone was amazing.",  # a holiday
        "Two weeks at Grandma's now and I'm going mad.",  # a stay
        "I met someone, but it didn't work out.",  # no partner now
        "The May 4 game was a disaster.",  # past, not a plan
        "I accepted the offer from Sam to help with the move.",  # not a job offer
        "I got promoted to the A team in my chess club.",  # not a job title
        "I'm back in Manila for a week to see my mum.",  # a visit
    ],
)
def test_what_is_not_a_lasting_fact_about_the_speaker_raises_none(said):
    assert _facts(said) == []
