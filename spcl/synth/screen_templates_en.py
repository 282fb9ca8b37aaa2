"""English sentences of the synthetic screen corpus (``spcl.synth.screen_data``): templates and slot
lists.

``TOPICS``: per category, templates about a specific person (SCPI) and general ones (RELATED);
``NONE_TEMPLATES`` and ``DAILY``: neutral text (hard negatives, everyday sentences); ``SLOTS``,
``PLACES`` and ``TEAMS`` fill the templates' slots, ``MONTHS`` their ``{month_en}`` and
:func:`person` their ``{p}``/``{q}``.
"""

from __future__ import annotations

import random


def _words(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


_EN_FIRST = _words(
    "James Mary John Linda Robert Susan Michael Karen David Emily Daniel "
    "Sarah Thomas Laura Kevin Anna"
)
_EN_LAST = _words(
    "Smith Johnson Williams Brown Jones Miller Davis Wilson Taylor Clark "
    "Walker Hall Young King Wright"
)

# Topic facts per language and category: (SCPI predicate about a person, RELATED general sentence).
TOPICS = {
    "MEDICAL": {
        "person": [
            "{p} was diagnosed with {d} and admitted to hospital.",
            "{p} underwent surgery for {d} last week.",
            "{p} died of {d} in {year}.",
            "{p} suffered a {inj} during training and will miss {n} weeks.",
            "{p} has been treated for {d} for years.",
            "My mother was diagnosed with {d} last month.",
            "My husband is in hospital recovering from {d}.",
            "{p} is taking a break to receive treatment for {d}.",
        ],
        "general": [
            "{d} can be treated if it is found early.",
            "Health officials say {n} thousand people live with {d}.",
            "Common symptoms of {d} include fever and fatigue.",
            "Researchers are testing a new treatment for {d}.",
            "The series follows a doctor who fights {d}.",
            "Healthy habits lower the risk of {d}.",
        ],
    },
    "CRIME": {
        "person": [
            "{p} was arrested on suspicion of {c}.",
            "{p} was sentenced to {n} years in prison.",
            "Prosecutors charged {p} with {c}.",
            "{p} was convicted of {c} in {year}.",
            "{p} testified as a victim of {c}.",
            "Police detained {p} for questioning over {c}.",
            "{p}, {n}, pleaded guilty to {c}.",
            "My brother was arrested for {c} last year.",
        ],
        "general": [
            "Reports of {c} fell by {n} percent last year.",
            "Police warned residents about {c}.",
            "Lawmakers passed a bill to toughen penalties for {c}.",
            "The novel follows a detective investigating {c}.",
            "Cases of {c} are rising in rural areas.",
            "Regulators are investigating the company for {c}.",
        ],
    },
    "DISABILITY": {
        "person": [
            "{p} has {dis} and uses a wheelchair.",
            "{p} was diagnosed with {dis} as a child.",
            "{p} competed at the Paralympics despite {dis}.",
            "My son has {dis}.",
            "{p} spoke openly about living with {dis}.",
        ],
        "general": [
            "Support for people with {dis} was expanded.",
            "The school offers classes for children with {dis}.",
            "The city wants to hire more disabled workers.",
            "A workshop raised awareness of {dis}.",
        ],
    },
    "OTHER": {
        "person": [
            "{p} is a devout {rel}.",
            "{p} came out as gay in an interview.",
            "{p} converted to {rel2} in {year}.",
            "{p} grew up as a refugee and later became a citizen.",
            "{p} said she faced discrimination because of her ethnicity.",
        ],
        "general": [
            "{rel2} is practised in many countries.",
            "The debate over same-sex marriage continues.",
            "Thousands marched against racial discrimination.",
            "The survey asked about religious belief.",
        ],
    },
}
SLOTS = {
    "d": _words(
        "cancer|lung cancer|leukemia|a stroke|a heart attack|diabetes|"
        "depression|schizophrenia|dementia|pneumonia|tuberculosis|hepatitis|"
        "Parkinson's disease|breast cancer|a brain tumor|bipolar disorder",
        "|",
    ),
    "inj": _words(
        "torn ligament|broken ankle|dislocated shoulder|back injury|hamstring strain", "|"
    ),
    "c": _words(
        "fraud|theft|murder|assault|embezzlement|bribery|drug trafficking|"
        "robbery|tax evasion|sexual assault|stalking|drunk driving|manslaughter",
        "|",
    ),
    "dis": _words(
        "a hearing impairment|a visual impairment|an intellectual disability|"
        "autism|cerebral palsy|paralysis|Down syndrome",
        "|",
    ),
    "rel": _words("Christian|Muslim|Buddhist|Catholic|Hindu", "|"),
    "rel2": _words("Islam|Buddhism|Catholicism|Judaism|Hinduism", "|"),
}
NONE_TEMPLATES = [
    "{p} graduated in {year} and joined a trading company.",
    "{p} will release a new album in {month_en}.",
    "{p} announced a run for mayor.",
    "{p} signed with {team} in {year}.",
    "{p}'s new film opened in theaters nationwide.",
    "{p} announced plans for a new company.",
    "The station redevelopment will be finished in {year}.",
    "The line opened in {year} and runs {n}-car trains.",
    "A truck overturned on the highway but no one was hurt.",
    "The two firms settled their contract dispute.",
    "The new phone will sell for {n} hundred dollars.",
    "Cherry blossoms are in full bloom in {place}.",
    "Critics praised {p}'s latest film.",
    "{team} won the match {n} to {m}.",
    "The council approved a new public library.",
    "The temple was built in {year}.",
    "{p} grew up in {place} and played baseball in high school.",
    "The plant can build {n} thousand cars a year.",
    "Flights to {place} were cancelled because of the storm.",
    "{p} and {q} married in {year}.",
]

# Everyday sentences without any person or topic: the bulk of real web text.
DAILY = [
    "We walked around the park on Sunday and stopped for coffee.",
    "This recipe uses less sugar than most.",
    "The new laptop is light and the battery lasts all day.",
    "Tomorrow will be sunny with rising temperatures.",
    "A new bakery opened five minutes from the station.",
    "Updating the app to the latest version fixes the bug.",
    "The autumn leaves peak in late November.",
    "Shipping is free on all orders this week.",
    "The library is open from nine in the morning to eight at night.",
    "Please save the slides to the shared folder.",
    "In spring, crowds gather under the cherry trees by the river.",
    "Our hotel room had a view of the sea.",
    "This camera is easy to use even for beginners.",
    "A new bus route starts running next month.",
    "Add plenty of salt when you boil pasta.",
    "We plan to go camping with the family this summer.",
    "Everything is twenty percent off during the sale.",
    "The region is known for its rice and fruit.",
    "A beginner course in programming has started.",
    "Bigger phone screens make videos easier to watch.",
    "The museum is showing an exhibition of modern art.",
    "The train was delayed by about thirty minutes.",
    "The tomatoes in the garden are turning red.",
    "The product launch is next Tuesday.",
    "The trail is easy and takes about two hours each way.",
    "On rainy days we usually stay in and watch movies.",
    "How do I reset my password if I forgot my email?",
    "The update improves startup time and fixes crashes.",
]
PLACES = _words("Boston|Denver|Seattle|Chicago|Austin|Portland|Toronto|Sydney", "|")
TEAMS = _words("the Red Sox|the Lakers|Arsenal|the Yankees|Chelsea", "|")
MONTHS = _words(
    "January February March April May June July August September October November December"
)


def person(rng: random.Random) -> str:
    """A person as English news text names one: a full name, or a partial name with title or age."""
    name = f"{rng.choice(_EN_FIRST)} {rng.choice(_EN_LAST)}"
    return rng.choice(
        [name, name, f"Mr. {rng.choice(_EN_LAST)}", f"{name}, {rng.randint(18, 85)},"]
    )
