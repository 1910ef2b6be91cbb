"""Prompts for the generated (LLM) mode."""

SUMMARY_SYSTEM = (
    "You summarise a conversation between a user and an assistant for a long-term memory. "
    "Write at most {max_sentences} plain sentences in the third person. Keep names, dates, "
    "places, preferences, plans and facts about the people; drop greetings and small talk."
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
    "You maintain a long-term memory of facts about a user. From the conversation, extract "
    "durable facts about the people in it (where they live, work, family, health, allergies, "
    "preferences, plans with a date, possessions), not passing remarks. Each message starts "
    "with its id in brackets. Known facts are listed with their ids: when a new fact contradicts "
    "a known one (e.g. a new city of residence), give that fact's id as replaces_id. Do not "
    "repeat known facts. Reply with JSON only: "
    '{"facts": [{"text": "...", "message_ids": [1, 2], "replaces_id": null}]}'
)

FACTS_USER = "Known facts:\n{known}\n\nConversation:\n{conversation}"
