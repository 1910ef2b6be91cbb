"""Prompts for the generated (LLM) mode."""

SUMMARY_SYSTEM = (
    "You summarise a conversation between a user and an assistant for a long-term memory. "
    "Each line starts with when it was said (UTC) and who said it. Write at most {max_sentences} plain "
    "sentences in the third person, saying who did what. Keep names, dates (write relative ones such as "
    "'last week' as dates, from the time of their line), places, numbers, preferences, plans and facts "
    "about the people; drop greetings and small talk."
)

INSUFFICIENT = "INSUFFICIENT_DATA"

ANSWER_SYSTEM = (
    "You answer questions about a user from their memory: summaries of past sessions, "
    "curated knowledge, diary entries and raw messages, each labelled with its kind and time. "
    "Each entry starts with its number in brackets, e.g. [2]. Answer only from this data, briefly, "
    "cite the numbers of the entries you used (\"... [2][5]\"), and resolve relative dates ('yesterday') "
    "against the time of the entry they appear in. If the data does not contain the answer, reply with "
    f"exactly {INSUFFICIENT} and nothing else."
)

ANSWER_USER = "Data:\n{data}\n\nQuestion: {question}"

FACTS_SYSTEM = (
    "You maintain a long-term memory of durable facts about the user, the speaker of the messages given. "
    "Each message starts with its id in brackets, when it was said (UTC) and the speaker's name. "
    "Write each fact as one short "
    'third-person statement naming the speaker ("Caroline lives in Osaka.", "Caroline has a guinea pig '
    'named Oscar."): where they live, work, family and partner, pets, health, allergies, diet, '
    "preferences, long-held habits, plans with a date (write relative dates such as 'next month' as dates, "
    "from the time of their message), possessions. Skip passing remarks, questions, "
    "hypotheticals, things that are denied, and anything about other people that is not also about the "
    "user. Give the ids of the messages each fact comes from; a slot when the fact fills an attribute the "
    "user has one value of at a time (residence, job, partner, diet, name, pet_name:<kind>, "
    "favourite:<thing>), else null; your confidence from 0 to 1; and the people, pets, places and "
    "organisations the fact names other than the user (name and kind; an empty list when none). Known "
    "facts are listed with their ids: do not repeat them; when a new fact without a slot contradicts one, "
    "give its id as replaces_id."
)

FACTS_USER = "Known facts:\n{known}\n\nConversation:\n{conversation}"

# OpenAI structured outputs (response_format json_schema, strict): the reply must match this schema.
FACTS_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "facts",
        "strict": True,
        "schema": {
            "type": "object",
            "additionalProperties": False,
            "required": ["facts"],
            "properties": {
                "facts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["text", "message_ids", "slot", "confidence", "replaces_id", "entities"],
                        "properties": {
                            "text": {"type": "string"},
                            "message_ids": {"type": "array", "items": {"type": "integer"}},
                            "slot": {"type": ["string", "null"]},
                            "confidence": {"type": "number"},
                            "replaces_id": {"type": ["integer", "null"]},
                            "entities": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "additionalProperties": False,
                                    "required": ["name", "kind"],
                                    "properties": {
                                        "name": {"type": "string"},
                                        "kind": {
                                            "type": "string",
                                            "enum": ["person", "pet", "place", "organisation", "other"],
                                        },
                                    },
                                },
                            },
                        },
                    },
                }
            },
        },
    },
}
